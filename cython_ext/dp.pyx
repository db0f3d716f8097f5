# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact inference for ATTACH + NOISYCHANNEL (MODEL.md §3), written once over a semiring.

The sentence is a forest of constituents; slot ``i`` carries the surface
punctuation ``x_i``.  Each slot's channel is inverted on the fly into a weighted
automaton whose states are ``(pending symbol, surface tokens emitted)``; state 0 is
"nothing pending", state ``1 + k*S + a`` is "``a`` pending after emitting ``k``".
``M_i(σ)`` is never stored: :func:`_trans` enumerates its edges from ``φ``.

Every constituent's inside matrix is kept in the factored form
``IN(w) = Σ_{l,r} P_w[l,r] · a_l b_r^T`` (MODEL.md §3's rank-one factorisation),
so the whole pass is vector work, ``O(n)`` in sentence length.  The outside
(reverse) pass is rank-one too: the adjoint of ``IN(w)`` is ``β_w γ_w^T``, which
gives the posterior marginals ``μ_w(l,r) ∝ P_w[l,r] (β·a_l)(b_r·γ)`` and the
expected edit counts, each normalised locally per node (no global outside scale).

Semirings: sum-product (``mx=0``) and max-product (``mx=1``) share the code; the
sum-product pass is also compiled for complex numbers, which gives exact
λ-derivatives of marginals and counts by the complex step (posterior
regularisation).  Vectors are rescaled to max 1 after every product, so
1,000-word sentences neither underflow nor overflow.
"""
import numpy as np
cimport cython
cimport numpy as cnp
from libc.math cimport log, fabs, INFINITY
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

cnp.import_array()

ctypedef fused num:
    double
    double complex

cdef enum:
    KEEP = 0
    ABSORB_LEFT = 1
    ABSORB_RIGHT = 2
    TRANSPOSE = 3
    GATHER = 0
    SCATTER = 1


cdef inline double re(num x) noexcept nogil:
    if num is double:
        return x
    else:
        return x.real


cdef inline num splus(num a, num b, bint mx) noexcept nogil:
    if mx:
        return a if re(a) >= re(b) else b
    return a + b


cdef struct Slot:
    const int* x      # surface symbols of this slot, in the order the channel reads them
    int m             # len(x)
    int N             # number of automaton states: 1 + m*S


cdef inline void _trans(Slot sl, int S, int sigma, const double* phi, int mode,
                        const num* vin, num* vout, bint mx) noexcept nogil:
    """vout ⊕= M'(σ)·vin (GATHER) or vinᵀ·M'(σ) (SCATTER), M' the L2R machine on sl.x."""
    cdef int k, a, src, dst, base
    cdef const double* ph
    cdef double w
    if sl.m == 0:
        return
    # none --σ--> (σ, 0), weight 1
    dst = 1 + sigma
    if mode == GATHER:
        vout[0] = splus(vout[0], vin[dst], mx)
    else:
        vout[dst] = splus(vout[dst], vin[0], mx)
    for k in range(sl.m):
        base = 1 + k * S
        for a in range(S):
            src = base + a
            ph = phi + (a * S + sigma) * 4
            if mode == GATHER:
                vout[src] = splus(vout[src], ph[ABSORB_LEFT] * vin[src], mx)
                vout[src] = splus(vout[src], ph[ABSORB_RIGHT] * vin[base + sigma], mx)
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        vout[src] = splus(vout[src], ph[KEEP] * vin[base + S + sigma], mx)
                    if sl.x[k] == sigma:
                        vout[src] = splus(vout[src], ph[TRANSPOSE] * vin[base + S + a], mx)
            else:
                if re(vin[src]) == 0.0 and vin[src] == 0:
                    continue
                vout[src] = splus(vout[src], ph[ABSORB_LEFT] * vin[src], mx)
                vout[base + sigma] = splus(vout[base + sigma], ph[ABSORB_RIGHT] * vin[src], mx)
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        dst = base + S + sigma
                        vout[dst] = splus(vout[dst], ph[KEEP] * vin[src], mx)
                    if sl.x[k] == sigma:
                        dst = base + S + a
                        vout[dst] = splus(vout[dst], ph[TRANSPOSE] * vin[src], mx)


cdef inline void _count(Slot sl, int S, int sigma, const double* phi, bint swap,
                        const num* up, const num* down, num coef, num* counts) noexcept nogil:
    """counts[a,σ,e] += coef · up[s]·w·down[d] over the edges s→d of M(σ).

    L2R: M = M' so (s, d) = (src, dst); R2L: M = M'ᵀ so (s, d) = (dst, src).
    """
    cdef int k, a, src, dst, base
    cdef const double* ph
    cdef num* cnt
    if sl.m == 0:
        return
    for k in range(sl.m):
        base = 1 + k * S
        for a in range(S):
            src = base + a
            ph = phi + (a * S + sigma) * 4
            cnt = counts + (a * S + sigma) * 4
            if not swap:
                cnt[ABSORB_LEFT] += coef * up[src] * ph[ABSORB_LEFT] * down[src]
                cnt[ABSORB_RIGHT] += coef * up[src] * ph[ABSORB_RIGHT] * down[base + sigma]
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        cnt[KEEP] += coef * up[src] * ph[KEEP] * down[base + S + sigma]
                    if sl.x[k] == sigma:
                        cnt[TRANSPOSE] += coef * up[src] * ph[TRANSPOSE] * down[base + S + a]
            else:
                cnt[ABSORB_LEFT] += coef * down[src] * ph[ABSORB_LEFT] * up[src]
                cnt[ABSORB_RIGHT] += coef * down[src] * ph[ABSORB_RIGHT] * up[base + sigma]
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        cnt[KEEP] += coef * down[src] * ph[KEEP] * up[base + S + sigma]
                    if sl.x[k] == sigma:
                        cnt[TRANSPOSE] += coef * down[src] * ph[TRANSPOSE] * up[base + S + a]


cdef inline void _zero(num* v, int N) noexcept nogil:
    cdef int s
    for s in range(N):
        v[s] = 0


cdef inline void _copy(num* dst, const num* src, int N) noexcept nogil:
    cdef int s
    for s in range(N):
        dst[s] = src[s]


cdef inline num _dot(const num* a, const num* b, int N, bint mx) noexcept nogil:
    cdef num acc = 0
    cdef int s
    for s in range(N):
        acc = splus(acc, a[s] * b[s], mx)
    return acc


cdef inline double _normalize(num* v, int N) noexcept nogil:
    """Scale v to max |Re| = 1; return log of the factor (-inf for a zero vector)."""
    cdef double mxv = 0.0, t
    cdef int s
    for s in range(N):
        t = fabs(re(v[s]))
        if t > mxv:
            mxv = t
    if mxv == 0.0:
        return -INFINITY
    for s in range(N):
        v[s] = v[s] / mxv
    return log(mxv)


cdef inline void _init_alpha(Slot sl, int S, bint r2l, num* v) noexcept nogil:
    _zero(v, sl.N)
    if sl.m == 0 or not r2l:
        v[0] = 1.0
    else:
        v[1 + (sl.m - 1) * S + sl.x[sl.m - 1]] = 1.0


cdef inline void _init_rho(Slot sl, int S, bint r2l, num* v) noexcept nogil:
    _zero(v, sl.N)
    if sl.m == 0 or r2l:
        v[0] = 1.0
    else:
        v[1 + (sl.m - 1) * S + sl.x[sl.m - 1]] = 1.0


cdef inline void _col(Slot sl, int S, int sigma, const double* phi, bint r2l,
                      const num* vin, num* vout, bint mx) noexcept nogil:
    """vout = M(σ)·vin (left-to-right order of the underlying string)."""
    _zero(vout, sl.N)
    _trans(sl, S, sigma, phi, SCATTER if r2l else GATHER, vin, vout, mx)


cdef inline void _row(Slot sl, int S, int sigma, const double* phi, bint r2l,
                      const num* vin, num* vout, bint mx) noexcept nogil:
    """vout = vinᵀ·M(σ)."""
    _zero(vout, sl.N)
    _trans(sl, S, sigma, phi, GATHER if r2l else SCATTER, vin, vout, mx)


cdef struct Tree:
    int n
    int S
    const int* first
    const int* last
    const int* kid_ptr
    const int* kids
    const int* nleft
    const int* order      # post-order
    const int* roots
    int n_roots
    const int* cand_ptr
    const int* cand_li
    const int* cand_ri
    const int* ul_ptr
    const int* ul
    const int* ur_ptr
    const int* ur
    const int* pm_ptr
    const int* pm_sym
    const int* pm_tail    # puncteme id of p minus its first symbol (-1: not a puncteme)
    const int* pm_head    # puncteme id of p minus its last symbol (-1: not a puncteme)
    int* loc              # scratch, one per puncteme, all -1 between uses
    int max_len           # longest puncteme
    Slot* slots
    const double* phi
    bint r2l


cdef struct Store:
    # offsets (in elements) into the vector buffer, per node
    long* offA
    long* offB
    long* offML
    long* offMR
    long* offCL
    long* offCR
    double* lA        # log scale of stored A (a_true = a_stored · exp(lA))
    double* lB
    double* nA        # stored a_l = M(l)·ML_stored / nA
    double* nB


cdef inline void _apply_puncteme_col(Tree* t, int slot, int pm, const num* vin, num* vout,
                                     num* tmp, bint mx) noexcept nogil:
    """vout = M(l)·vin for puncteme l (symbols applied right to left)."""
    cdef Slot sl = t.slots[slot]
    cdef int p0 = t.pm_ptr[pm], p1 = t.pm_ptr[pm + 1], q
    _copy(vout, vin, sl.N)
    for q in range(p1 - 1, p0 - 1, -1):
        _col(sl, t.S, t.pm_sym[q], t.phi, t.r2l, vout, tmp, mx)
        _copy(vout, tmp, sl.N)


cdef inline void _apply_puncteme_row(Tree* t, int slot, int pm, const num* vin, num* vout,
                                     num* tmp, bint mx) noexcept nogil:
    """vout = vinᵀ·M(r) for puncteme r (symbols applied left to right)."""
    cdef Slot sl = t.slots[slot]
    cdef int p0 = t.pm_ptr[pm], p1 = t.pm_ptr[pm + 1], q
    _copy(vout, vin, sl.N)
    for q in range(p0, p1):
        _row(sl, t.S, t.pm_sym[q], t.phi, t.r2l, vout, tmp, mx)
        _copy(vout, tmp, sl.N)



cdef inline void _rows_col(Tree* t, int slot, const int* pms, int U, const num* vin, num* out,
                           num* tmp, bint mx) noexcept nogil:
    """out[u] = M(pms[u])·vin for u < U (rows of ``N`` entries), shortest punctemes first, so
    that a puncteme whose tail (all but its first symbol) is also among ``pms`` costs one
    symbol: M(l) = M(l₁)·M(tail).  The same operations on the same vectors as
    :func:`_apply_puncteme_col`, so the rows are bit-identical to it."""
    cdef int N = t.slots[slot].N, L, u, pm, q
    for u in range(U):
        t.loc[pms[u]] = u
    for L in range(t.max_len + 1):
        for u in range(U):
            pm = pms[u]
            if t.pm_ptr[pm + 1] - t.pm_ptr[pm] != L:
                continue
            q = t.pm_tail[pm] if L > 0 else -1
            if q >= 0 and t.loc[q] >= 0:
                _col(t.slots[slot], t.S, t.pm_sym[t.pm_ptr[pm]], t.phi, t.r2l, out + t.loc[q] * N, out + u * N, mx)
            else:
                _apply_puncteme_col(t, slot, pm, vin, out + u * N, tmp, mx)
    for u in range(U):
        t.loc[pms[u]] = -1


cdef inline void _rows_row(Tree* t, int slot, const int* pms, int U, const num* vin, num* out,
                           num* tmp, bint mx) noexcept nogil:
    """out[u] = vinᵀ·M(pms[u]), sharing heads (all but the last symbol) like :func:`_rows_col`."""
    cdef int N = t.slots[slot].N, L, u, pm, q
    for u in range(U):
        t.loc[pms[u]] = u
    for L in range(t.max_len + 1):
        for u in range(U):
            pm = pms[u]
            if t.pm_ptr[pm + 1] - t.pm_ptr[pm] != L:
                continue
            q = t.pm_head[pm] if L > 0 else -1
            if q >= 0 and t.loc[q] >= 0:
                _row(t.slots[slot], t.S, t.pm_sym[t.pm_ptr[pm + 1] - 1], t.phi, t.r2l, out + t.loc[q] * N, out + u * N, mx)
            else:
                _apply_puncteme_row(t, slot, pm, vin, out + u * N, tmp, mx)
    for u in range(U):
        t.loc[pms[u]] = -1


cdef double _in_col(Tree* t, Store* st, num* buf, const num* P, int w, const num* v, num* out,
                    num* ts, num* ss, bint mx) noexcept nogil:
    """out = IN(w)·v (stored scales); returns lA+lB."""
    cdef int i = t.first[w], k = t.last[w] + 1
    cdef int Ni = t.slots[i].N, Nk = t.slots[k].N
    cdef int UL = t.ul_ptr[w + 1] - t.ul_ptr[w], UR = t.ur_ptr[w + 1] - t.ur_ptr[w]
    cdef int r, l, c, s
    cdef num* A = buf + st.offA[w]
    cdef num* B = buf + st.offB[w]
    for r in range(UR):
        ts[r] = _dot(B + r * Nk, v, Nk, mx)
    for l in range(UL):
        ss[l] = 0
    for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
        l = t.cand_li[c]
        ss[l] = splus(ss[l], P[c] * ts[t.cand_ri[c]], mx)
    _zero(out, Ni)
    for l in range(UL):
        if re(ss[l]) == 0.0 and ss[l] == 0:
            continue
        for s in range(Ni):
            out[s] = splus(out[s], ss[l] * A[l * Ni + s], mx)
    return st.lA[w] + st.lB[w]


cdef double _in_row(Tree* t, Store* st, num* buf, const num* P, int w, const num* h, num* out,
                    num* ts, num* ss, bint mx) noexcept nogil:
    """out = hᵀ·IN(w) (stored scales); returns lA+lB."""
    cdef int i = t.first[w], k = t.last[w] + 1
    cdef int Ni = t.slots[i].N, Nk = t.slots[k].N
    cdef int UL = t.ul_ptr[w + 1] - t.ul_ptr[w], UR = t.ur_ptr[w + 1] - t.ur_ptr[w]
    cdef int r, l, c, s
    cdef num* A = buf + st.offA[w]
    cdef num* B = buf + st.offB[w]
    for l in range(UL):
        ts[l] = _dot(A + l * Ni, h, Ni, mx)
    for r in range(UR):
        ss[r] = 0
    for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
        r = t.cand_ri[c]
        ss[r] = splus(ss[r], P[c] * ts[t.cand_li[c]], mx)
    _zero(out, Nk)
    for r in range(UR):
        if re(ss[r]) == 0.0 and ss[r] == 0:
            continue
        for s in range(Nk):
            out[s] = splus(out[s], ss[r] * B[r * Nk + s], mx)
    return st.lA[w] + st.lB[w]


cdef double _inside(Tree* t, Store* st, num* buf, const num* P, num* v, num* v2, num* tmp,
                    num* ts, num* ss, num* alpha0, bint mx) noexcept nogil:
    """Bottom-up pass; fills A, B, ML, MR and the inside-side context vectors. Returns log Z."""
    cdef int oi, w, i, j, k, Ni, Nk, q, c, UL, UR, l, r, s, kp0, kp1, nl
    cdef double lv, mxv, logZ
    cdef num* A
    cdef num* B
    cdef Slot sl
    for oi in range(t.n):
        w = t.order[oi]
        j = w
        i = t.first[w]
        k = t.last[w] + 1
        Ni = t.slots[i].N
        Nk = t.slots[k].N
        kp0 = t.kid_ptr[w]
        kp1 = t.kid_ptr[w + 1]
        nl = t.nleft[w]
        # left: ML = IN(c1)…IN(cp)·ρ_j
        _init_rho(t.slots[j], t.S, t.r2l, v)
        lv = 0.0
        for q in range(kp0 + nl - 1, kp0 - 1, -1):
            c = t.kids[q]
            _copy(buf + st.offCR[c], v, t.slots[t.last[c] + 1].N)
            lv += _in_col(t, st, buf, P, c, v, v2, ts, ss, mx)
            lv += _normalize(v2, t.slots[t.first[c]].N)
            _copy(v, v2, t.slots[t.first[c]].N)
        _copy(buf + st.offML[w], v, Ni)
        # A: a_l = M_i(l)·ML
        UL = t.ul_ptr[w + 1] - t.ul_ptr[w]
        A = buf + st.offA[w]
        _rows_col(t, i, t.ul + t.ul_ptr[w], UL, v, A, tmp, mx)
        mxv = 0.0
        for s in range(UL * Ni):
            if fabs(re(A[s])) > mxv:
                mxv = fabs(re(A[s]))
        if mxv > 0.0:
            for s in range(UL * Ni):
                A[s] = A[s] / mxv
            st.lA[w] = lv + log(mxv)
        else:
            st.lA[w] = -INFINITY
            mxv = 1.0
        st.nA[w] = mxv
        # right: MR = α_{j+1}ᵀ·IN(d1)…IN(dq)
        _init_alpha(t.slots[j + 1], t.S, t.r2l, v)
        lv = 0.0
        for q in range(kp0 + nl, kp1):
            c = t.kids[q]
            _copy(buf + st.offCL[c], v, t.slots[t.first[c]].N)
            lv += _in_row(t, st, buf, P, c, v, v2, ts, ss, mx)
            lv += _normalize(v2, t.slots[t.last[c] + 1].N)
            _copy(v, v2, t.slots[t.last[c] + 1].N)
        _copy(buf + st.offMR[w], v, Nk)
        UR = t.ur_ptr[w + 1] - t.ur_ptr[w]
        B = buf + st.offB[w]
        _rows_row(t, k, t.ur + t.ur_ptr[w], UR, v, B, tmp, mx)
        mxv = 0.0
        for s in range(UR * Nk):
            if fabs(re(B[s])) > mxv:
                mxv = fabs(re(B[s]))
        if mxv > 0.0:
            for s in range(UR * Nk):
                B[s] = B[s] / mxv
            st.lB[w] = lv + log(mxv)
        else:
            st.lB[w] = -INFINITY
            mxv = 1.0
        st.nB[w] = mxv
    # top chain: α_0 (after '^') · IN(root_1)…IN(root_m) · ρ_n
    sl = t.slots[0]
    _init_alpha(sl, t.S, t.r2l, tmp)
    _row(sl, t.S, 0, t.phi, t.r2l, tmp, alpha0, mx)
    _copy(v, alpha0, sl.N)
    lv = _normalize(v, sl.N)
    for q in range(t.n_roots):
        c = t.roots[q]
        _copy(buf + st.offCL[c], v, t.slots[t.first[c]].N)
        lv += _in_row(t, st, buf, P, c, v, v2, ts, ss, mx)
        lv += _normalize(v2, t.slots[t.last[c] + 1].N)
        _copy(v, v2, t.slots[t.last[c] + 1].N)
    _init_rho(t.slots[t.n], t.S, t.r2l, v2)
    logZ = re(_dot(v, v2, t.slots[t.n].N, mx))
    if logZ <= 0.0:
        return -INFINITY
    return lv + log(logZ)


cdef void _outside(Tree* t, Store* st, num* buf, const num* P, num* v, num* v2, num* tmp,
                   num* ts, num* ss, num* alpha0, num* mu, num* counts, bint want_counts,
                   bint mx, num* down, num* g, num* acc, num* tl, num* tr) noexcept nogil:
    """Top-down pass: marginals μ (max-marginals when mx) and expected edit counts."""
    cdef int oi, w, i, j, k, Ni, Nk, q, c, UL, UR, l, r, s, kp0, kp1, nl, p0, p1, u, nsym, pm, maxN
    cdef num Zw, coef
    cdef num* A
    cdef num* B
    cdef num* beta
    cdef num* gamma
    cdef Slot sl
    # top chain backwards: κ = ρ_n; ctxR[root] = κ; κ = IN(root)·κ
    _init_rho(t.slots[t.n], t.S, t.r2l, v)
    for q in range(t.n_roots - 1, -1, -1):
        c = t.roots[q]
        _copy(buf + st.offCR[c], v, t.slots[t.last[c] + 1].N)
        _in_col(t, st, buf, P, c, v, v2, ts, ss, mx)
        _normalize(v2, t.slots[t.first[c]].N)
        _copy(v, v2, t.slots[t.first[c]].N)
    if want_counts:
        # α_0 = α·M_0(^): the '^' edges carry parameters in R2L
        sl = t.slots[0]
        Zw = _dot(alpha0, v, sl.N, mx)
        _init_alpha(sl, t.S, t.r2l, tmp)
        _count(sl, t.S, 0, t.phi, t.r2l, tmp, v, 1.0 / Zw, counts)
    for oi in range(t.n - 1, -1, -1):
        w = t.order[oi]
        j = w
        i = t.first[w]
        k = t.last[w] + 1
        Ni = t.slots[i].N
        Nk = t.slots[k].N
        kp0 = t.kid_ptr[w]
        kp1 = t.kid_ptr[w + 1]
        nl = t.nleft[w]
        UL = t.ul_ptr[w + 1] - t.ul_ptr[w]
        UR = t.ur_ptr[w + 1] - t.ur_ptr[w]
        A = buf + st.offA[w]
        B = buf + st.offB[w]
        beta = buf + st.offCL[w]
        gamma = buf + st.offCR[w]
        for l in range(UL):
            tl[l] = _dot(beta, A + l * Ni, Ni, mx)
        for r in range(UR):
            tr[r] = _dot(B + r * Nk, gamma, Nk, mx)
        Zw = 0
        for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
            mu[c] = P[c] * tl[t.cand_li[c]] * tr[t.cand_ri[c]]
            Zw = splus(Zw, mu[c], mx)
        if re(Zw) == 0.0:
            continue  # unreachable node (cannot happen when Z > 0)
        for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
            mu[c] = mu[c] / Zw
        # s_l = ⊕ P·tr ; t_r = ⊕ P·tl
        for l in range(UL):
            ts[l] = 0
        for r in range(UR):
            ss[r] = 0
        for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
            ts[t.cand_li[c]] = splus(ts[t.cand_li[c]], P[c] * tr[t.cand_ri[c]], mx)
            ss[t.cand_ri[c]] = splus(ss[t.cand_ri[c]], P[c] * tl[t.cand_li[c]], mx)
        # λ = ⊕_l s_l · βᵀM_i(l), with counts along each puncteme
        _zero(acc, Ni)
        sl = t.slots[i]
        for l in range(UL):
            if re(ts[l]) == 0.0 and ts[l] == 0:
                continue
            pm = t.ul[t.ul_ptr[w] + l]
            p0 = t.pm_ptr[pm]
            p1 = t.pm_ptr[pm + 1]
            nsym = p1 - p0
            if want_counts and nsym > 0:
                # down_u = M(l_{u+1}..l_t)·ML, stored for u = nsym-1 … 0 at down + u*Ni
                _copy(down + (nsym - 1) * Ni, buf + st.offML[w], Ni)
                for u in range(nsym - 1, 0, -1):
                    _col(sl, t.S, t.pm_sym[p0 + u], t.phi, t.r2l, down + u * Ni, down + (u - 1) * Ni, mx)
            _copy(g, beta, Ni)
            coef = ts[l] / (Zw * st.nA[w])
            for u in range(nsym):
                if want_counts:
                    _count(sl, t.S, t.pm_sym[p0 + u], t.phi, t.r2l, g, down + u * Ni, coef, counts)
                _row(sl, t.S, t.pm_sym[p0 + u], t.phi, t.r2l, g, tmp, mx)
                _copy(g, tmp, Ni)
            for s in range(Ni):
                acc[s] = splus(acc[s], ts[l] * g[s], mx)
        # left kids, left to right: ctxL[c1] = λ; ctxL[c_{m+1}] = ctxL[c_m]ᵀ·IN(c_m)
        _normalize(acc, Ni)
        _copy(v, acc, Ni)
        for q in range(kp0, kp0 + nl):
            c = t.kids[q]
            _copy(buf + st.offCL[c], v, t.slots[t.first[c]].N)
            _in_row(t, st, buf, P, c, v, v2, ts, tl, mx)
            _normalize(v2, t.slots[t.last[c] + 1].N)
            _copy(v, v2, t.slots[t.last[c] + 1].N)
        # κ = ⊕_r t_r · M_k(r)·γ, with counts
        _zero(acc, Nk)
        sl = t.slots[k]
        for r in range(UR):
            if re(ss[r]) == 0.0 and ss[r] == 0:
                continue
            pm = t.ur[t.ur_ptr[w] + r]
            p0 = t.pm_ptr[pm]
            p1 = t.pm_ptr[pm + 1]
            nsym = p1 - p0
            if want_counts and nsym > 0:
                # up_u = MRᵀ·M(r_1..r_{u}), stored for u = 0 … nsym-1 at down + u*Nk
                _copy(down, buf + st.offMR[w], Nk)
                for u in range(1, nsym):
                    _row(sl, t.S, t.pm_sym[p0 + u - 1], t.phi, t.r2l, down + (u - 1) * Nk, down + u * Nk, mx)
            _copy(g, gamma, Nk)
            coef = ss[r] / (Zw * st.nB[w])
            for u in range(nsym - 1, -1, -1):
                if want_counts:
                    _count(sl, t.S, t.pm_sym[p0 + u], t.phi, t.r2l, down + u * Nk, g, coef, counts)
                _col(sl, t.S, t.pm_sym[p0 + u], t.phi, t.r2l, g, tmp, mx)
                _copy(g, tmp, Nk)
            for s in range(Nk):
                acc[s] = splus(acc[s], ss[r] * g[s], mx)
        _normalize(acc, Nk)
        _copy(v, acc, Nk)
        for q in range(kp1 - 1, kp0 + nl - 1, -1):
            c = t.kids[q]
            _copy(buf + st.offCR[c], v, t.slots[t.last[c] + 1].N)
            _in_col(t, st, buf, P, c, v, v2, ts, tl, mx)
            _normalize(v2, t.slots[t.first[c]].N)
            _copy(v, v2, t.slots[t.first[c]].N)



cdef struct Sampler:
    const double* P
    const double* u      # one uniform draw per node, consumed in sampling order
    int next_u
    long* choice         # chosen lattice candidate per node
    double* v            # scratch vectors (never held across a recursive call)
    double* v2
    double* tmp
    double* ts
    double* ss


cdef void _sample_node(Tree* t, Store* st, double* buf, Sampler* sm, int w) noexcept nogil:
    """Draw w's (l, r) given everything drawn so far (β = ctxL[w], γ = ctxR[w] are the
    conditional outside vectors), then its subtree left to right.  Leaves the drawn
    subtree's factors a* in ML[w] and b* in MR[w] (normalised)."""
    cdef int i = t.first[w], j = w, k = t.last[w] + 1
    cdef int Ni = t.slots[i].N, Nk = t.slots[k].N
    cdef int kp0 = t.kid_ptr[w], kp1 = t.kid_ptr[w + 1], nl = t.nleft[w]
    cdef int c, q, lpm, rpm, Nc
    cdef double tot = 0.0, acc, target
    cdef double* A = buf + st.offA[w]
    cdef double* B = buf + st.offB[w]
    cdef double* beta = buf + st.offCL[w]
    cdef double* gamma = buf + st.offCR[w]
    cdef long chosen = -1
    for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
        tot += sm.P[c] * _dot(beta, A + t.cand_li[c] * Ni, Ni, False) * _dot(B + t.cand_ri[c] * Nk, gamma, Nk, False)
    target = sm.u[sm.next_u] * tot
    sm.next_u += 1
    acc = 0.0
    for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
        chosen = c
        acc += sm.P[c] * _dot(beta, A + t.cand_li[c] * Ni, Ni, False) * _dot(B + t.cand_ri[c] * Nk, gamma, Nk, False)
        if acc > target:
            break
    sm.choice[w] = chosen
    lpm = t.ul[t.ul_ptr[w] + t.cand_li[chosen]]
    rpm = t.ur[t.ur_ptr[w] + t.cand_ri[chosen]]
    # left kids: ctxL[c1] = βᵀ·M_i(l*); ctxL[c_{m+1}] ∝ b*(c_m); γ of each = inside suffix ctxR
    if nl > 0:
        c = t.kids[kp0]
        _apply_puncteme_row(t, i, lpm, beta, buf + st.offCL[c], sm.tmp, False)
        _normalize(buf + st.offCL[c], Ni)
        for q in range(kp0, kp0 + nl):
            c = t.kids[q]
            _sample_node(t, st, buf, sm, c)
            if q + 1 < kp0 + nl:
                Nc = t.slots[t.last[c] + 1].N
                _copy(buf + st.offCL[t.kids[q + 1]], buf + st.offMR[c], Nc)
        _copy(sm.v, buf + st.offML[t.kids[kp0]], Ni)
    else:
        _init_rho(t.slots[j], t.S, t.r2l, sm.v)
    # right kids: γ suffixes over the undrawn right kids, starting from κ = M_k(r*)·γ
    if kp1 > kp0 + nl:
        c = t.kids[kp1 - 1]
        _apply_puncteme_col(t, k, rpm, gamma, buf + st.offCR[c], sm.tmp, False)
        _normalize(buf + st.offCR[c], Nk)
        for q in range(kp1 - 1, kp0 + nl, -1):
            c = t.kids[q]
            _in_col(t, st, buf, sm.P, c, buf + st.offCR[c], sm.v2, sm.ts, sm.ss, False)
            Nc = t.slots[t.first[c]].N
            _normalize(sm.v2, Nc)
            _copy(buf + st.offCR[t.kids[q - 1]], sm.v2, Nc)
    # a* = M_i(l*)·ML*  (ML* ∝ a*(c1) or ρ_j); written to ML[w] after the left kids are done
    _apply_puncteme_col(t, i, lpm, sm.v, sm.v2, sm.tmp, False)
    _normalize(sm.v2, Ni)
    _copy(buf + st.offML[w], sm.v2, Ni)
    if kp1 > kp0 + nl:
        c = t.kids[kp0 + nl]
        _init_alpha(t.slots[j + 1], t.S, t.r2l, buf + st.offCL[c])
        for q in range(kp0 + nl, kp1):
            c = t.kids[q]
            _sample_node(t, st, buf, sm, c)
            if q + 1 < kp1:
                _copy(buf + st.offCL[t.kids[q + 1]], buf + st.offMR[c], t.slots[t.last[c] + 1].N)
        _copy(sm.v, buf + st.offMR[t.kids[kp1 - 1]], Nk)
    else:
        _init_alpha(t.slots[j + 1], t.S, t.r2l, sm.v)
    _apply_puncteme_row(t, k, rpm, sm.v, sm.v2, sm.tmp, False)
    _normalize(sm.v2, Nk)
    _copy(buf + st.offMR[w], sm.v2, Nk)


cdef class _Workspace:
    """Per-call buffers and the Tree/Store views over a lattice's arrays."""
    cdef Tree t
    cdef Store st
    cdef Slot* slots
    cdef long total
    cdef int maxN, maxU, maxSym
    cdef object keep  # references to arrays backing the pointers
    cdef long[::1] offs
    cdef double[::1] scales
    cdef int[::1] loc

    def __cinit__(self):
        self.slots = NULL

    def __dealloc__(self):
        if self.slots != NULL:
            free(self.slots)

    cdef void setup(self, object lat, object grammar, double[:, :, ::1] phi, bint r2l) except *:
        cdef int n = lat.n, S = grammar.n_symbols, w, i, Ni, Nk, UL, UR
        cdef int[::1] x_ptr = lat.x_ptr_r if r2l else lat.x_ptr
        cdef int[::1] x_sym = lat.x_sym_r if r2l else lat.x_sym
        cdef int[::1] first = lat.first, last = lat.last, kid_ptr = lat.kid_ptr, kids = lat.kids
        cdef int[::1] nleft = lat.nleft, order = lat.order, roots = lat.roots
        cdef int[::1] cand_ptr = lat.cand_ptr, cand_li = lat.cand_li, cand_ri = lat.cand_ri
        cdef int[::1] ul_ptr = lat.ul_ptr, ul = lat.ul, ur_ptr = lat.ur_ptr, ur = lat.ur
        cdef int[::1] pm_ptr = grammar.pm_ptr, pm_sym = grammar.pm_sym
        cdef int[::1] pm_tail = grammar.pm_tail, pm_head = grammar.pm_head
        cdef int n_pm = pm_ptr.shape[0] - 1
        if pm_tail.shape[0] != n_pm or pm_head.shape[0] != n_pm:
            raise ValueError("grammar: pm_tail / pm_head must have one entry per puncteme")
        self.loc = np.full(max(n_pm, 1), -1, dtype=np.int32)
        if phi.shape[0] != S or phi.shape[1] != S or phi.shape[2] != 4:
            raise ValueError(f"phi must have shape ({S}, {S}, 4), got {tuple(phi.shape)[:3]}")
        self.keep = (lat, grammar, phi, pm_tail, pm_head)
        self.slots = <Slot*>malloc((n + 1) * sizeof(Slot))
        self.maxN = 1
        self.maxSym = 1
        for i in range(n + 1):
            self.slots[i].m = x_ptr[i + 1] - x_ptr[i]
            self.slots[i].x = &x_sym[x_ptr[i]] if self.slots[i].m > 0 else NULL
            self.slots[i].N = 1 + self.slots[i].m * S
            if self.slots[i].N > self.maxN:
                self.maxN = self.slots[i].N
        for i in range(pm_ptr.shape[0] - 1):
            if pm_ptr[i + 1] - pm_ptr[i] > self.maxSym:
                self.maxSym = pm_ptr[i + 1] - pm_ptr[i]
        self.t.n = n
        self.t.S = S
        self.t.first = &first[0]
        self.t.last = &last[0]
        self.t.kid_ptr = &kid_ptr[0]
        self.t.kids = &kids[0] if kids.shape[0] > 0 else NULL
        self.t.nleft = &nleft[0]
        self.t.order = &order[0]
        self.t.roots = &roots[0]
        self.t.n_roots = roots.shape[0]
        self.t.cand_ptr = &cand_ptr[0]
        self.t.cand_li = &cand_li[0]
        self.t.cand_ri = &cand_ri[0]
        self.t.ul_ptr = &ul_ptr[0]
        self.t.ul = &ul[0]
        self.t.ur_ptr = &ur_ptr[0]
        self.t.ur = &ur[0]
        self.t.pm_ptr = &pm_ptr[0]
        self.t.pm_sym = &pm_sym[0] if pm_sym.shape[0] > 0 else NULL
        self.t.pm_tail = &pm_tail[0]
        self.t.pm_head = &pm_head[0]
        self.t.loc = &self.loc[0]
        self.t.max_len = self.maxSym
        self.t.slots = self.slots
        self.t.phi = &phi[0, 0, 0]
        self.t.r2l = r2l
        # offsets: A, B, ML, MR, CL, CR per node
        self.offs = np.zeros(6 * n, dtype=np.int64)
        self.scales = np.zeros(4 * n, dtype=np.float64)
        self.maxU = 1
        self.total = 0
        for w in range(n):
            Ni = self.slots[first[w]].N
            Nk = self.slots[last[w] + 1].N
            UL = ul_ptr[w + 1] - ul_ptr[w]
            UR = ur_ptr[w + 1] - ur_ptr[w]
            if UL > self.maxU:
                self.maxU = UL
            if UR > self.maxU:
                self.maxU = UR
            self.offs[w] = self.total
            self.total += UL * Ni
            self.offs[n + w] = self.total
            self.total += UR * Nk
            self.offs[2 * n + w] = self.total
            self.total += Ni
            self.offs[3 * n + w] = self.total
            self.total += Nk
            self.offs[4 * n + w] = self.total
            self.total += Ni
            self.offs[5 * n + w] = self.total
            self.total += Nk
        self.st.offA = &self.offs[0]
        self.st.offB = &self.offs[n]
        self.st.offML = &self.offs[2 * n]
        self.st.offMR = &self.offs[3 * n]
        self.st.offCL = &self.offs[4 * n]
        self.st.offCR = &self.offs[5 * n]
        self.st.lA = &self.scales[0]
        self.st.lB = &self.scales[n]
        self.st.nA = &self.scales[2 * n]
        self.st.nB = &self.scales[3 * n]


cdef tuple _run(_Workspace ws, num[::1] P, num[::1] buf, num[::1] scratch, num[::1] mu,
                num[::1] counts, bint do_outside, bint want_counts, bint mx):
    cdef int N = ws.maxN, U = ws.maxU + 1
    cdef num* sp = &scratch[0]
    cdef num* v = sp
    cdef num* v2 = sp + N
    cdef num* tmp = sp + 2 * N
    cdef num* alpha0 = sp + 3 * N
    cdef num* g = sp + 4 * N
    cdef num* acc = sp + 5 * N
    cdef num* ts = sp + 6 * N
    cdef num* ss = ts + U
    cdef num* tl = ss + U
    cdef num* tr = tl + U
    cdef num* down = tr + U
    cdef double logZ
    cdef num* bp = &buf[0]
    cdef num* Pp = &P[0]
    cdef num* mup = &mu[0]
    cdef num* cp = &counts[0]
    with nogil:
        logZ = _inside(&ws.t, &ws.st, bp, Pp, v, v2, tmp, ts, ss, alpha0, mx)
        if do_outside and logZ > -INFINITY:
            _outside(&ws.t, &ws.st, bp, Pp, v, v2, tmp, ts, ss, alpha0, mup, cp,
                     want_counts, mx, down, g, acc, tl, tr)
    return (logZ,)


def run_dp(lat, grammar, cand_p, double[:, :, ::1] phi, bint r2l, str mode, bint outside=True,
           bint counts=True, tilt=None, double tilt_step=1e-30, counts_out=None):
    """Run the DP on one lattice.

    mode: "sum" (log Z, marginals, expected edit counts) or "max" (log of the best
    derivation, max-marginals).  With ``tilt`` (sum mode only) the pass is also run
    on complex weights ``P·(1 + i·h·tilt)`` and returns d/dλ of marginals and counts.
    ``counts_out`` (float64, S·S·4, C-contiguous): the expected counts are *added* to it
    (a trainer sums them over a batch without a fresh array per sentence) and it is
    what is returned as counts.
    Returns (logZ, mu, counts, dmu, dcounts).
    """
    cdef _Workspace ws = _Workspace()
    cdef bint mx = mode == "max"
    if mode not in ("sum", "max"):
        raise ValueError(f"unknown semiring mode {mode!r}")
    ws.setup(lat, grammar, phi, r2l)
    cdef int S = grammar.n_symbols
    cdef long K = lat.cand_li.shape[0]
    cdef long scratch_n = 6 * ws.maxN + 4 * (ws.maxU + 1) + ws.maxN * ws.maxSym + 8
    P = np.ascontiguousarray(cand_p, dtype=np.float64)
    if P.shape[0] != K:
        raise ValueError(f"cand_p has {P.shape[0]} entries, the lattice has {K} candidates")
    mu = np.zeros(K, dtype=np.float64)
    if counts_out is None:
        cnt = np.zeros(S * S * 4, dtype=np.float64)
    else:
        cnt = counts_out
        if cnt.dtype != np.float64 or cnt.size != S * S * 4 or not cnt.flags.c_contiguous:
            raise ValueError(f"counts_out must be a C-contiguous float64 array of {S * S * 4} entries")
        cnt = cnt.reshape(-1)
    out = _run[double](ws, P, np.zeros(max(ws.total, 1), dtype=np.float64),
                       np.zeros(scratch_n, dtype=np.float64), mu, cnt, outside,
                       counts and not mx, mx)
    logZ = out[0]
    dmu = dcnt = None
    if tilt is not None and not mx and logZ > -np.inf and outside:
        h = np.ascontiguousarray(tilt, dtype=np.float64)
        Pc = P * (1.0 + 1j * tilt_step * h)
        muc = np.zeros(K, dtype=np.complex128)
        cntc = np.zeros(S * S * 4, dtype=np.complex128)
        _run[cython.doublecomplex](ws, Pc, np.zeros(max(ws.total, 1), dtype=np.complex128),
                                   np.zeros(scratch_n, dtype=np.complex128), muc, cntc, True,
                                   counts, False)
        dmu = muc.imag / tilt_step
        dcnt = (cntc.imag / tilt_step).reshape(S, S, 4)
    return logZ, mu, cnt.reshape(S, S, 4), dmu, dcnt


def sample_dp(lat, grammar, cand_p, double[:, :, ::1] phi, bint r2l, double[:, ::1] uniforms):
    """Exact draws of T' ~ p(T' | T, x): one row of ``uniforms`` (n draws) per sample.

    Returns (logZ, choices int64[n_samples, n]) with lattice-candidate indices.
    """
    cdef _Workspace ws = _Workspace()
    ws.setup(lat, grammar, phi, r2l)
    cdef long K = lat.cand_li.shape[0]
    cdef int n = lat.n, n_samples = uniforms.shape[0], si, q, c, N = ws.maxN, U = ws.maxU + 1
    if uniforms.shape[1] != n:
        raise ValueError("uniforms must have one column per word")
    cdef double[::1] P = np.ascontiguousarray(cand_p, dtype=np.float64)
    cdef double[::1] buf = np.zeros(max(ws.total, 1), dtype=np.float64)
    cdef double[::1] scratch = np.zeros(8 * N + 4 * U + 8, dtype=np.float64)
    cdef long[:, ::1] choices = np.full((n_samples, n), -1, dtype=np.int64)
    cdef double* sp = &scratch[0]
    cdef double logZ
    cdef Sampler sm
    cdef Tree* t = &ws.t
    cdef Store* st = &ws.st
    cdef double* bp = &buf[0]
    with nogil:
        logZ = _inside(t, st, bp, &P[0], sp, sp + N, sp + 2 * N, sp + 6 * N, sp + 6 * N + U,
                       sp + 3 * N, False)
    if logZ == -INFINITY:
        return logZ, np.asarray(choices)
    sm.P = &P[0]
    sm.v = sp
    sm.v2 = sp + N
    sm.tmp = sp + 2 * N
    sm.ts = sp + 6 * N
    sm.ss = sp + 6 * N + U
    with nogil:
        for si in range(n_samples):
            sm.u = &uniforms[si, 0]
            sm.next_u = 0
            sm.choice = &choices[si, 0]
            # roots: γ suffixes over undrawn roots, then draw left to right
            c = t.roots[t.n_roots - 1]
            _init_rho(t.slots[n], t.S, t.r2l, bp + st.offCR[c])
            for q in range(t.n_roots - 1, 0, -1):
                c = t.roots[q]
                _in_col(t, st, bp, sm.P, c, bp + st.offCR[c], sm.v2, sm.ts, sm.ss, False)
                _normalize(sm.v2, t.slots[t.first[c]].N)
                _copy(bp + st.offCR[t.roots[q - 1]], sm.v2, t.slots[t.first[c]].N)
            c = t.roots[0]
            _init_alpha(t.slots[0], t.S, t.r2l, sm.tmp)
            _row(t.slots[0], t.S, 0, t.phi, t.r2l, sm.tmp, bp + st.offCL[c], False)
            _normalize(bp + st.offCL[c], t.slots[0].N)
            for q in range(t.n_roots):
                c = t.roots[q]
                _sample_node(t, st, bp, &sm, c)
                if q + 1 < t.n_roots:
                    _copy(bp + st.offCL[t.roots[q + 1]], bp + st.offMR[c], t.slots[t.last[c] + 1].N)
    return logZ, np.asarray(choices)


cdef void _per_node_unique(long n, long n_pm, const long* col, const int* cand_ptr, int* stamp,
                           int* rank, int* ptr, int* vals, int* idx) noexcept nogil:
    """Per node: its candidates' distinct values of ``col`` in increasing order (``vals``,
    node w's at ``ptr[w]:ptr[w+1]``) and each candidate's index among them (``idx``)."""
    cdef long w, k, v
    cdef int cnt
    ptr[0] = 0
    for w in range(n):
        for k in range(cand_ptr[w], cand_ptr[w + 1]):
            stamp[col[k]] = <int>w
        cnt = 0
        for v in range(n_pm):
            if stamp[v] == w:
                rank[v] = cnt
                vals[ptr[w] + cnt] = <int>v
                cnt += 1
        ptr[w + 1] = ptr[w] + cnt
        for k in range(cand_ptr[w], cand_ptr[w + 1]):
            idx[k] = rank[col[k]]


def candidate_fields(long n, long n_pm, const long[::1] cand_l, const long[::1] cand_r,
                     const long[::1] node):
    """The candidate index arrays of a lattice (see ``dp._candidate_fields``): ``cand_ptr``,
    ``cand_li``, ``cand_ri``, ``ul_ptr``, ``ul``, ``ur_ptr``, ``ur`` (int32; ``ul``/``ur`` are
    ``[0]`` when empty).  ``node`` must be non-decreasing and every value in ``0..n_pm-1``."""
    cdef long K = node.shape[0], k
    if cand_l.shape[0] != K or cand_r.shape[0] != K:
        raise ValueError("cand_l, cand_r and node must have one length")
    for k in range(K):
        if node[k] < 0 or node[k] >= n or (k > 0 and node[k] < node[k - 1]):
            raise ValueError("candidate nodes must be non-decreasing and within the sentence")
        if cand_l[k] < 0 or cand_l[k] >= n_pm or cand_r[k] < 0 or cand_r[k] >= n_pm:
            raise ValueError(f"candidate {k} has a puncteme id outside 0..{n_pm - 1}")
    cdef int[::1] cand_ptr = np.zeros(n + 1, dtype=np.int32)
    for k in range(K):
        cand_ptr[node[k] + 1] += 1
    for k in range(n):
        cand_ptr[k + 1] += cand_ptr[k]
    cdef int[::1] stamp = np.full(max(n_pm, 1), -1, dtype=np.int32)
    cdef int[::1] rank = np.zeros(max(n_pm, 1), dtype=np.int32)
    cdef int[::1] li = np.zeros(K, dtype=np.int32), ri = np.zeros(K, dtype=np.int32)
    cdef int[::1] ul_ptr = np.zeros(n + 1, dtype=np.int32), ur_ptr = np.zeros(n + 1, dtype=np.int32)
    cdef int[::1] ul = np.zeros(max(K, 1), dtype=np.int32), ur = np.zeros(max(K, 1), dtype=np.int32)
    if K:
        with nogil:
            _per_node_unique(n, n_pm, &cand_l[0], &cand_ptr[0], &stamp[0], &rank[0], &ul_ptr[0], &ul[0], &li[0])
            stamp[:] = -1
            _per_node_unique(n, n_pm, &cand_r[0], &cand_ptr[0], &stamp[0], &rank[0], &ur_ptr[0], &ur[0], &ri[0])
    nl, nr = max(ul_ptr[n], 1), max(ur_ptr[n], 1)
    return (np.asarray(cand_ptr), np.asarray(li), np.asarray(ri), np.asarray(ul_ptr),
            np.asarray(ul)[:nl].copy(), np.asarray(ur_ptr), np.asarray(ur)[:nr].copy())
