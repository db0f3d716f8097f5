# cython: language_level=3
"""Compiled per-batch loops of the training step (ATTACH scores and gradient, lazy Adam).

Why: with 5-sentence batches the NumPy versions spent most of their time in per-call
overhead (one ``np.unique``/gather/scatter per relation per batch, a dozen temporaries
per Adam step); these loops do the same arithmetic in one pass each.

ATTACH (see attach.py): node ``w`` of relation ``r`` has units ``u`` whose known
features are (column ``c``, feature ``f``) entries.  Its pair scores are
``score[j] = Σ_k t[pc[j, k]]`` with ``t[c] = Σ_u θ[f(u, c)]`` -- the column weights are
summed over the node's units first, so the cost is entries + P·K per node.  The gradient
of ``Σ_j G[j]·score[j]`` wrt θ[f] is ``g[c] = Σ_{(j,k): pc[j,k]=c} G[j]`` at each entry.

Lazy Adam (see lazy_adam.py): the same float32 operations, in the same order, as
``spacy_punctgen.testing.numpy_adam.adam_step``, one feature at a time (bit-identical results).
"""
import numpy as np
from spacy_punctgen.errors import Errors
cimport numpy as cnp
from libc.math cimport exp, log, sqrtf

cnp.import_array()

cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil

# how many entries ahead the loops prefetch θ, its moments and the scratch slots (random
# access into arrays of tens of millions of entries: cache misses are most of their time)
DEF AHEAD = 16

ctypedef fused real:
    float
    double


cdef long _widest(const long[::1] tab_V) noexcept nogil:
    """The widest relation's number of pair-property columns (at least 1): the size of the
    per-node scratch column."""
    cdef long m = 1
    cdef Py_ssize_t r
    for r in range(tab_V.shape[0]):
        if tab_V[r] > m:
            m = tab_V[r]
    return m


def attach_forward(const real[::1] theta, const long[::1] rel_ids, const long[::1] unit_ptr,
                   const long[::1] units, const long[::1] uptr, const int[::1] ucol,
                   const long[::1] ufeat, const long[::1] tab_P, const long[::1] tab_K,
                   const long[::1] tab_V, const long[::1] tab_off, const long[::1] pc,
                   const long[::1] node_off, double[::1] logp):
    """Fill ``logp[node_off[w]:node_off[w+1]]`` with node ``w``'s log p_θ(pair | w)."""
    cdef Py_ssize_t N = rel_ids.shape[0]
    cdef long maxV = _widest(tab_V)
    cdef double[::1] tcol = np.zeros(maxV, dtype=np.float64)
    cdef Py_ssize_t w, a, e, j, k
    cdef long u, rid, P, K, V, base, o
    cdef double s, m, z
    with nogil:
        for w in range(N):
            rid = rel_ids[w]
            P = tab_P[rid]
            K = tab_K[rid]
            V = tab_V[rid]
            base = tab_off[rid]
            for a in range(V):
                tcol[a] = 0.0
            for a in range(unit_ptr[w], unit_ptr[w + 1]):
                u = units[a]
                for e in range(uptr[u], uptr[u + 1]):
                    if e + AHEAD < uptr[u + 1]:
                        __builtin_prefetch(&theta[ufeat[e + AHEAD]])
                    tcol[ucol[e]] += theta[ufeat[e]]
            o = node_off[w]
            m = -1e308
            for j in range(P):
                s = tcol[pc[base + j * K]]
                for k in range(1, K):
                    s = s + tcol[pc[base + j * K + k]]
                logp[o + j] = s
                if s > m:
                    m = s
            z = 0.0
            for j in range(P):
                z += exp(logp[o + j] - m)
            z = log(z)
            for j in range(P):
                logp[o + j] = (logp[o + j] - m) - z


cdef double _pairwise(const double* a, Py_ssize_t n, Py_ssize_t stride) noexcept nogil:
    """NumPy's pairwise summation of ``n`` doubles ``a[0], a[stride], ...`` (the order of
    ``np.add.reduce``: 8 accumulators in blocks of up to 128, halves above), so that sums
    made here equal NumPy's to the last bit."""
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i * stride]
        return res
    if n <= 128:
        r0 = a[0]
        r1 = a[stride]
        r2 = a[2 * stride]
        r3 = a[3 * stride]
        r4 = a[4 * stride]
        r5 = a[5 * stride]
        r6 = a[6 * stride]
        r7 = a[7 * stride]
        i = 8
        while i < n - (n % 8):
            r0 += a[i * stride]
            r1 += a[(i + 1) * stride]
            r2 += a[(i + 2) * stride]
            r3 += a[(i + 3) * stride]
            r4 += a[(i + 4) * stride]
            r5 += a[(i + 5) * stride]
            r6 += a[(i + 6) * stride]
            r7 += a[(i + 7) * stride]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i * stride]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, n2, stride) + _pairwise(a + n2 * stride, n - n2, stride)


def segment_sums(const double[::1] values, const long[::1] offsets, double[::1] out):
    """``out[i] = values[offsets[i]:offsets[i+1]].sum()`` summed as NumPy sums a row."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(offsets.shape[0] - 1):
            out[i] = _pairwise(&values[0] + offsets[i], offsets[i + 1] - offsets[i], 1) \
                if offsets[i + 1] > offsets[i] else 0.0


cdef double _pairwise_rows(const double* cache, const long* rows, Py_ssize_t n, long j) noexcept nogil:
    """:func:`_pairwise` of ``cache[rows[0] + j], cache[rows[1] + j], ...`` (the same order)."""
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = -0.0
        for i in range(n):
            res += cache[rows[i] + j]
        return res
    if n <= 128:
        r0 = cache[rows[0] + j]
        r1 = cache[rows[1] + j]
        r2 = cache[rows[2] + j]
        r3 = cache[rows[3] + j]
        r4 = cache[rows[4] + j]
        r5 = cache[rows[5] + j]
        r6 = cache[rows[6] + j]
        r7 = cache[rows[7] + j]
        i = 8
        while i < n - (n % 8):
            r0 += cache[rows[i] + j]
            r1 += cache[rows[i + 1] + j]
            r2 += cache[rows[i + 2] + j]
            r3 += cache[rows[i + 3] + j]
            r4 += cache[rows[i + 4] + j]
            r5 += cache[rows[i + 5] + j]
            r6 += cache[rows[i + 6] + j]
            r7 += cache[rows[i + 7] + j]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += cache[rows[i] + j]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_rows(cache, rows, n2, j) + _pairwise_rows(cache, rows + n2, n - n2, j)


cdef void _pairwise_rows_all(const double* cache, const long* rows, Py_ssize_t n, long P, double* out,
                             double* acc) noexcept nogil:
    """``out[j] = _pairwise_rows(cache, rows, n, j)`` for every ``j < P``, a row at a time
    (each ``out[j]`` sums the same terms in the same order; ``acc``: 8·P scratch)."""
    cdef Py_ssize_t i, b, j
    cdef const double* row
    if n < 8:
        for j in range(P):
            out[j] = -0.0
        for i in range(n):
            row = cache + rows[i]
            for j in range(P):
                out[j] += row[j]
        return
    if n > 128:
        for j in range(P):
            out[j] = _pairwise_rows(cache, rows, n, j)
        return
    for b in range(8):
        row = cache + rows[b]
        for j in range(P):
            acc[b * P + j] = row[j]
    i = 8
    while i < n - (n % 8):
        for b in range(8):
            row = cache + rows[i + b]
            for j in range(P):
                acc[b * P + j] += row[j]
        i += 8
    for j in range(P):
        out[j] = ((acc[j] + acc[P + j]) + (acc[2 * P + j] + acc[3 * P + j])) + \
                 ((acc[4 * P + j] + acc[5 * P + j]) + (acc[6 * P + j] + acc[7 * P + j]))
    while i < n:
        row = cache + rows[i]
        for j in range(P):
            out[j] += row[j]
        i += 1


def attach_scores(const real[::1] theta, const long[::1] rel_ids, const long[::1] unit_ptr,
                  const long[::1] units, const long[::1] uptr, const int[::1] ucol,
                  const long[::1] ufeat, const long[::1] tab_P, const long[::1] tab_K,
                  const long[::1] tab_V, const long[::1] tab_off, const long[::1] pc,
                  const long[::1] node_off, double[::1] z):
    """Node ``w``'s pair scores minus their maximum into ``z[node_off[w]:node_off[w+1]]``,
    summed in the order of AttachScorer.predict's NumPy operations (so equal to the bit):
    per distinct unit of the batch ``S[j] = t[pc[j, 0]] + t[pc[j, 1]] + ...`` (``t``: the
    unit's column weights, 0 where it has no feature), then
    ``score[j] = S_0[j] + pairwise(S_1[j], S_2[j], ...)`` over the node's units in order (as
    ``np.add.reduceat`` sums).  Every node needs a unit (E185)."""
    cdef Py_ssize_t N = rel_ids.shape[0], E = units.shape[0]
    cdef long maxV = _widest(tab_V)
    cdef Py_ssize_t w, a, e, j, k, h
    for w in range(N):
        if unit_ptr[w + 1] <= unit_ptr[w]:
            raise ValueError(Errors.E185.format(w=w))
    # distinct units: an open-addressing table unit -> its row's offset in ``cache``
    cdef Py_ssize_t cap = 16
    while cap < 2 * E:
        cap <<= 1
    keys_arr = np.full(cap, -1, dtype=np.int64)
    vals_arr = np.empty(cap, dtype=np.int64)
    row_arr = np.empty(E, dtype=np.int64)
    new_arr = np.empty(E, dtype=np.int64)  # occurrence index of each distinct unit's first use
    cdef long[::1] keys = keys_arr, vals = vals_arr, row_of = row_arr, first = new_arr
    cdef Py_ssize_t n_new = 0, total = 0
    cdef unsigned long long hv
    cdef long u, rid, P, K, base, o, m
    with nogil:
        for w in range(N):
            P = tab_P[rel_ids[w]]
            for a in range(unit_ptr[w], unit_ptr[w + 1]):
                u = units[a]
                hv = (<unsigned long long>u) * 11400714819323198485ULL
                h = <Py_ssize_t>(hv >> 20) & (cap - 1)
                while keys[h] != -1 and keys[h] != u:
                    h = (h + 1) & (cap - 1)
                if keys[h] == -1:
                    keys[h] = u
                    vals[h] = total
                    total += P
                    first[n_new] = a
                    n_new += 1
                row_of[a] = vals[h]
    cache_arr = np.empty(max(total, 1), dtype=np.float64)
    cdef double[::1] cache = cache_arr
    cdef double[::1] tcol = np.zeros(maxV, dtype=np.float64)
    node_arr = np.empty(E, dtype=np.int64)  # the node of each occurrence
    cdef long[::1] node_of = node_arr
    cdef long maxP = 1
    for w in range(tab_P.shape[0]):
        if tab_P[w] > maxP:
            maxP = tab_P[w]
    cdef double[::1] rest = np.empty(maxP, dtype=np.float64)
    cdef double[::1] acc = np.empty(8 * maxP, dtype=np.float64)
    cdef Py_ssize_t q
    cdef double s, mx
    with nogil:
        for w in range(N):
            for a in range(unit_ptr[w], unit_ptr[w + 1]):
                node_of[a] = w
        for q in range(n_new):
            a = first[q]
            u = units[a]
            rid = rel_ids[node_of[a]]
            P = tab_P[rid]
            K = tab_K[rid]
            base = tab_off[rid]
            for e in range(uptr[u], uptr[u + 1]):
                if e + AHEAD < uptr[u + 1]:
                    __builtin_prefetch(&theta[ufeat[e + AHEAD]])
                tcol[ucol[e]] = theta[ufeat[e]]
            o = row_of[a]
            for j in range(P):
                s = tcol[pc[base + j * K]]
                for k in range(1, K):
                    s = s + tcol[pc[base + j * K + k]]
                cache[o + j] = s
            for e in range(uptr[u], uptr[u + 1]):
                tcol[ucol[e]] = 0.0
        for w in range(N):
            P = tab_P[rel_ids[w]]
            a = unit_ptr[w]
            m = unit_ptr[w + 1] - a
            o = node_off[w]
            if m > 1:
                _pairwise_rows_all(&cache[0], &row_of[a + 1], m - 1, P, &rest[0], &acc[0])
                for j in range(P):
                    z[o + j] = cache[row_of[a] + j] + rest[j]
            else:
                for j in range(P):
                    z[o + j] = cache[row_of[a] + j]
            if P:
                mx = z[o]
                for j in range(1, P):
                    if z[o + j] > mx:
                        mx = z[o + j]
                for j in range(P):
                    z[o + j] = z[o + j] - mx


def attach_backward(const double[::1] G, const long[::1] rel_ids, const long[::1] unit_ptr,
                    const long[::1] units, const long[::1] uptr, const int[::1] ucol,
                    const long[::1] ufeat, const long[::1] tab_P, const long[::1] tab_K,
                    const long[::1] tab_V, const long[::1] tab_off, const long[::1] pc,
                    const long[::1] node_off, int[::1] slot):
    """∂/∂θ of ``Σ_w Σ_j G[node_off[w]+j]·score_w(j)`` as (distinct feature ids, values).

    ``slot`` is a scratch array of θ's length filled with -1 (left so on return)."""
    cdef Py_ssize_t N = rel_ids.shape[0]
    cdef long maxV = _widest(tab_V)
    cdef Py_ssize_t bound = 0, w, a, e, j, k
    for w in range(N):
        for a in range(unit_ptr[w], unit_ptr[w + 1]):
            bound += uptr[units[a] + 1] - uptr[units[a]]
    cdef double[::1] gcol = np.zeros(maxV, dtype=np.float64)
    idx_arr = np.empty(bound, dtype=np.int64)
    val_arr = np.empty(bound, dtype=np.float64)
    cdef long[::1] idx = idx_arr
    cdef double[::1] val = val_arr
    cdef Py_ssize_t n = 0
    cdef long u, rid, P, K, V, base, o, f
    cdef int sl
    cdef double gj
    with nogil:
        for w in range(N):
            rid = rel_ids[w]
            P = tab_P[rid]
            K = tab_K[rid]
            V = tab_V[rid]
            base = tab_off[rid]
            o = node_off[w]
            for a in range(V):
                gcol[a] = 0.0
            for j in range(P):
                gj = G[o + j]
                for k in range(K):
                    gcol[pc[base + j * K + k]] += gj
            for a in range(unit_ptr[w], unit_ptr[w + 1]):
                u = units[a]
                for e in range(uptr[u], uptr[u + 1]):
                    if e + AHEAD < uptr[u + 1]:
                        __builtin_prefetch(&slot[ufeat[e + AHEAD]])
                    f = ufeat[e]
                    sl = slot[f]
                    if sl < 0:
                        slot[f] = <int>n
                        idx[n] = f
                        val[n] = gcol[ucol[e]]
                        n += 1
                    else:
                        val[sl] += gcol[ucol[e]]
        for a in range(n):
            slot[idx[a]] = -1
    return idx_arr[:n], val_arr[:n]


def dedupe(const long[::1] ids, const double[::1] vals, int[::1] slot):
    """Distinct ids (in order of first appearance) and their summed values."""
    cdef Py_ssize_t m = ids.shape[0], i, n = 0
    idx_arr = np.empty(m, dtype=np.int64)
    val_arr = np.empty(m, dtype=np.float64)
    cdef long[::1] idx = idx_arr
    cdef double[::1] val = val_arr
    cdef long f
    cdef int sl
    with nogil:
        for i in range(m):
            f = ids[i]
            sl = slot[f]
            if sl < 0:
                slot[f] = <int>n
                idx[n] = f
                val[n] = vals[i]
                n += 1
            else:
                val[sl] += vals[i]
        for i in range(n):
            slot[idx[i]] = -1
    return idx_arr[:n], val_arr[:n]


def adam_step(float[::1] theta, float[:, ::1] state, int[::1] last, const long[::1] idx,
              const double[::1] grad, long t, const float[::1] rate, const float[::1] geo,
              const float[::1] pow1, const float[::1] pow2, const double[::1] log_keep,
              const double[::1] decay, double b1, double b2, double eps, double l2, bint average):
    """One lazy Adam step on the distinct features ``idx`` (see lazy_adam.py); returns the
    change of ``Σ θ[idx]²`` (float64), which lets a trainer keep ‖θ‖² without a pass over θ."""
    cdef Py_ssize_t n = idx.shape[0], i
    cdef float feps = <float>eps, fb1 = <float>b1, fb2 = <float>b2
    cdef float c1 = <float>(1.0 - b1), c2 = <float>(1.0 - b2), cl2 = <float>(2.0 * l2)
    cdef float rt = rate[t], one = 1.0
    cdef float cd = <float>(1.0 - decay[t])
    cdef long f, lst, gap
    cdef float m, v, th, th_gap, g, ema, keep
    cdef double dsq = 0.0
    with nogil:
        for i in range(n):
            if i + AHEAD < n:
                f = idx[i + AHEAD]
                __builtin_prefetch(&state[f, 0])
                __builtin_prefetch(&last[f])
                __builtin_prefetch(&theta[f])
            f = idx[i]
            lst = last[f]
            gap = t - 1 - lst
            m = state[f, 0]
            v = state[f, 1]
            th = theta[f]
            dsq -= <double>th * <double>th
            th = th - ((rate[lst + 1] * geo[gap]) * m) / (sqrtf(v) + feps)
            th_gap = th
            m = m * pow1[gap]
            v = v * pow2[gap]
            g = <float>grad[i]
            g = g + (cl2 * <float>(gap + 1)) * th
            m = m * fb1
            m = m + c1 * g
            v = v * fb2
            v = v + (c2 * g) * g
            th = th - (rt * m) / (sqrtf(v) + feps)
            theta[f] = th
            dsq += <double>th * <double>th
            if average:
                ema = state[f, 2]
                keep = <float>exp(log_keep[t - 1] - log_keep[lst])
                ema = ema - (ema - th_gap) * (one - keep)
                ema = ema - cd * (ema - th)
                state[f, 2] = ema
            state[f, 0] = m
            state[f, 1] = v
            last[f] = <int>t
    return dsq
