# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact inference for ATTACH + NOISYCHANNEL (docs/model.md §3), written once over a side and a
semiring.

The types and the long explanation are in ``dp.pxd``: each slot's channel as an automaton,
the rank-one factored inside matrices, *sides* and *walks* (one function serves the left and
the right half of everything), the sentence as the only root chain, and the semirings
(sum-product, max-product, sampling; the complex step is sum-product over complex numbers)
over one bottom-up and one top-down traversal.
"""
import numpy as np
cimport cython
from libc.math cimport log, fabs, INFINITY
from libc.stdlib cimport malloc, free
from libc.string cimport memmove, memset

from dp cimport (KEEP, ABSORB_LEFT, ABSORB_RIGHT, TRANSPOSE, Flow, GATHER, SCATTER, LEFT, RIGHT,
                 MAX_PRODUCT, SAMPLING, SUM_PRODUCT, Pass, Semiring, Slot, Store, Tree, num)

from spacy_punctgen.errors import Errors

cdef enum:
    BOS = 0  # symbol id of '^'


# ------------------------------------------------------------------ numbers and vectors
cdef inline double re(num x) noexcept nogil:
    if num is double:
        return x
    else:
        return x.real


cdef inline num splus(num a, num b, Semiring sr) noexcept nogil:
    """The semiring's ⊕ (sampling's inside pass is sum-product's)."""
    if sr == MAX_PRODUCT:
        return a if re(a) >= re(b) else b
    return a + b


cdef inline bint _is_zero(num x) noexcept nogil:
    return re(x) == 0.0 and x == 0


cdef inline void _zero(num* v, int N) noexcept nogil:
    cdef int s
    for s in range(N):
        v[s] = 0


cdef inline void _copy(num* dst, const num* src, int N) noexcept nogil:
    cdef int s
    for s in range(N):
        dst[s] = src[s]


cdef inline num _dot(const num* a, const num* b, int N, Semiring sr) noexcept nogil:
    cdef num acc = 0
    cdef int s
    for s in range(N):
        acc = splus(acc, a[s] * b[s], sr)
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


# ------------------------------------------------------------------ one slot's automaton
cdef inline void _trans(Slot sl, int S, int sigma, const double* phi, Flow flow,
                        const num* vin, num* vout, Semiring sr) noexcept nogil:
    """vout ⊕= M'(σ)·vin (GATHER) or vinᵀ·M'(σ) (SCATTER), M' the L2R machine on sl.x."""
    cdef int k, a, src, dst, base
    cdef const double* ph
    if sl.free:  # every surface allowed: the channel's outputs of any string sum to 1
        vout[0] = splus(vout[0], vin[0], sr)
        return
    if sl.m == 0:
        return
    # none --σ--> (σ, 0), weight 1
    dst = 1 + sigma
    if flow == GATHER:
        vout[0] = splus(vout[0], vin[dst], sr)
    else:
        vout[dst] = splus(vout[dst], vin[0], sr)
    if num is double:
        if sr == MAX_PRODUCT:
            _trans_max(sl, S, sigma, phi, flow, vin, vout)
            return
    for k in range(sl.m):
        base = 1 + k * S
        for a in range(S):
            src = base + a
            ph = phi + (a * S + sigma) * 4
            if flow == GATHER:
                vout[src] = splus(vout[src], ph[ABSORB_LEFT] * vin[src], sr)
                vout[src] = splus(vout[src], ph[ABSORB_RIGHT] * vin[base + sigma], sr)
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        vout[src] = splus(vout[src], ph[KEEP] * vin[base + S + sigma], sr)
                    if sl.x[k] == sigma:
                        vout[src] = splus(vout[src], ph[TRANSPOSE] * vin[base + S + a], sr)
            else:
                if _is_zero(vin[src]):
                    continue
                vout[src] = splus(vout[src], ph[ABSORB_LEFT] * vin[src], sr)
                vout[base + sigma] = splus(vout[base + sigma], ph[ABSORB_RIGHT] * vin[src], sr)
                if k + 1 < sl.m:
                    if sl.x[k] == a:
                        dst = base + S + sigma
                        vout[dst] = splus(vout[dst], ph[KEEP] * vin[src], sr)
                    if sl.x[k] == sigma:
                        dst = base + S + a
                        vout[dst] = splus(vout[dst], ph[TRANSPOSE] * vin[src], sr)


cdef inline double _dmax(double a, double b) noexcept nogil:
    """MAX_PRODUCT's ⊕ (``splus``) on doubles."""
    return a if a >= b else b


cdef inline void _trans_max(Slot sl, int S, int sigma, const double* phi, Flow flow,
                            const double* vin, double* vout) noexcept nogil:
    """:func:`_trans`'s arcs of the symbols (the loop over k) under MAX_PRODUCT, where ⊕ is max:
    the same arcs, each weighing into the same state, in an order without a branch per arc (a
    maximum does not depend on the order it is taken in, so the vector is the same to the bit):
    the absorptions over every a first, then the one keep arc and, where x[k] = σ, the
    transpositions."""
    cdef int k, a, src, dst, base, xk
    cdef const double* ph
    cdef double v, acc
    for k in range(sl.m):
        base = 1 + k * S
        xk = sl.x[k] if k + 1 < sl.m else -1  # the keep / transpose arcs lead to the next k
        if flow == GATHER:
            v = vin[base + sigma]
            for a in range(S):
                src = base + a
                if v == 0.0 and vin[src] == 0.0:
                    continue  # both arcs weigh 0, and no entry of vout is below 0
                ph = phi + (a * S + sigma) * 4
                vout[src] = _dmax(_dmax(vout[src], ph[ABSORB_LEFT] * vin[src]), ph[ABSORB_RIGHT] * v)
            if xk >= 0:
                src = base + xk
                ph = phi + (xk * S + sigma) * 4
                vout[src] = _dmax(vout[src], ph[KEEP] * vin[base + S + sigma])
                if xk == sigma:
                    for a in range(S):
                        ph = phi + (a * S + sigma) * 4
                        vout[base + a] = _dmax(vout[base + a], ph[TRANSPOSE] * vin[base + S + a])
        else:
            acc = vout[base + sigma]
            for a in range(S):
                src = base + a
                if vin[src] == 0.0:
                    continue
                ph = phi + (a * S + sigma) * 4
                vout[src] = _dmax(vout[src], ph[ABSORB_LEFT] * vin[src])
                acc = _dmax(acc, ph[ABSORB_RIGHT] * vin[src])
            # (the absorptions into base + σ: from its own AL arc above and every AR arc)
            vout[base + sigma] = _dmax(vout[base + sigma], acc)
            if xk >= 0:
                src = base + xk
                if vin[src] != 0.0:
                    ph = phi + (xk * S + sigma) * 4
                    dst = base + S + sigma
                    vout[dst] = _dmax(vout[dst], ph[KEEP] * vin[src])
                if xk == sigma:
                    for a in range(S):
                        src = base + a
                        if vin[src] == 0.0:
                            continue
                        ph = phi + (a * S + sigma) * 4
                        dst = base + S + a
                        vout[dst] = _dmax(vout[dst], ph[TRANSPOSE] * vin[src])


cdef inline void _count(const Tree* t, int slot, int sigma, const num* row, const num* col, num coef,
                        num* counts) noexcept nogil:
    """counts[a,σ,e] += coef · row[s]·w·col[d] over the arcs s → d of M(σ), where ``row`` is
    the vector of the walk toward RIGHT and ``col`` that of the walk toward LEFT meeting it.
    M = M' in L2R, so (s, d) = (src, dst) of M' as :func:`_trans` enumerates it; M = M'ᵀ in R2L,
    so (s, d) = (dst, src)."""
    cdef Slot sl = t.slots[slot]
    cdef int S = t.S, k, a, src, base
    cdef const num* x = col if t.r2l else row  # at the M' arc's source
    cdef const num* y = row if t.r2l else col  # at its destination
    cdef const double* ph
    cdef num* cnt
    for k in range(sl.m):
        base = 1 + k * S
        for a in range(S):
            src = base + a
            ph = t.phi + (a * S + sigma) * 4
            cnt = counts + (a * S + sigma) * 4
            cnt[ABSORB_LEFT] += coef * x[src] * ph[ABSORB_LEFT] * y[src]
            cnt[ABSORB_RIGHT] += coef * x[src] * ph[ABSORB_RIGHT] * y[base + sigma]
            if k + 1 < sl.m:
                if sl.x[k] == a:
                    cnt[KEEP] += coef * x[src] * ph[KEEP] * y[base + S + sigma]
                if sl.x[k] == sigma:
                    cnt[TRANSPOSE] += coef * x[src] * ph[TRANSPOSE] * y[base + S + a]


# ------------------------------------------------------------------ sides and walks
cdef inline int _other(int s) noexcept nogil:
    return RIGHT - s


cdef inline int _edge(const Tree* t, int w, int s) noexcept nogil:
    """The slot at the edge of w's constituent on side s."""
    return t.first[w] if s == LEFT else t.last[w] + 1


cdef inline int _word_slot(int w, int s) noexcept nogil:
    """The slot next to w's own word on side s (where the walks of its side start)."""
    return w if s == LEFT else w + 1


cdef inline int _N(const Tree* t, int slot) noexcept nogil:
    return t.slots[slot].N


cdef inline const int* _kids(const Tree* t, int w, int s, int* count) noexcept nogil:
    """w's dependents on side s, in sentence order; their number in ``count[0]``."""
    cdef int a = t.kid_ptr[w], nl = t.nleft[w]
    if s == LEFT:
        count[0] = nl
        return t.kids + a
    count[0] = t.kid_ptr[w + 1] - a - nl
    return t.kids + a + nl


cdef inline int _outermost(const int* kids, int count, int s) noexcept nogil:
    """The dependent farthest from the word among ``kids`` (on side s, ``count`` > 0)."""
    return kids[0] if s == LEFT else kids[count - 1]


cdef inline int _chosen(const Tree* t, long c, int w, int s) noexcept nogil:
    """The puncteme that candidate c of node w puts on side s."""
    return t.u[s][t.u_ptr[s][w] + t.cand_u[s][c]]


cdef inline bint _along(const Tree* t, int toward) noexcept nogil:
    """Whether a walk toward ``toward`` follows the channel's reading order."""
    return (toward == RIGHT) != t.r2l


cdef inline void _boundary(const Tree* t, int slot, int toward, num* v) noexcept nogil:
    """The vector a walk toward ``toward`` starts with at a word boundary: the automaton's start
    state if the walk follows the reading order, else its final state (the last surface symbol
    pending after the others were written)."""
    cdef Slot sl = t.slots[slot]
    _zero(v, sl.N)
    if sl.m == 0 or _along(t, toward):
        v[0] = 1.0
    else:
        v[1 + (sl.m - 1) * t.S + sl.x[sl.m - 1]] = 1.0


cdef inline void _step(const Tree* t, int slot, int sigma, int toward, const num* vin, num* vout,
                       Semiring sr) noexcept nogil:
    """vout = vin moved across the underlying symbol σ: M(σ)·vin toward LEFT, vinᵀ·M(σ) toward RIGHT."""
    _zero(vout, t.slots[slot].N)
    _trans(t.slots[slot], t.S, sigma, t.phi, SCATTER if _along(t, toward) else GATHER, vin, vout, sr)


cdef inline int _sym(const Tree* t, int pm, int toward, int q) noexcept nogil:
    """The q-th symbol of puncteme pm that a walk toward ``toward`` crosses (toward LEFT: its
    last symbol first)."""
    if toward == RIGHT:
        return t.pm_sym[t.pm_ptr[pm] + q]
    return t.pm_sym[t.pm_ptr[pm + 1] - 1 - q]


cdef inline void _apply(const Tree* t, int slot, int pm, int toward, const num* vin, num* vout,
                        num* tmp, Semiring sr) noexcept nogil:
    """vout = vin moved across the puncteme pm."""
    cdef int N = t.slots[slot].N, q
    _copy(vout, vin, N)
    for q in range(t.pm_ptr[pm + 1] - t.pm_ptr[pm]):
        _step(t, slot, _sym(t, pm, toward, q), toward, vout, tmp, sr)
        _copy(vout, tmp, N)


cdef inline void _rows(Tree* t, int slot, const int* pms, int U, int toward, const num* vin, num* out,
                       num* tmp, Semiring sr) noexcept nogil:
    """out[u] = vin moved across the puncteme pms[u], for u < U (rows of N entries), shortest
    first, so that a puncteme whose rest (itself without the symbol crossed last,
    ``t.pm_rest[toward]``) is among ``pms`` costs one step from the rest's row.  The same
    operations on the same vectors as :func:`_apply`, so the rows are bit-identical to it."""
    cdef int N = t.slots[slot].N, L, u, pm, q
    cdef const int* rest = t.pm_rest[toward]
    for u in range(U):
        t.loc[pms[u]] = u
    for L in range(t.max_len + 1):
        for u in range(U):
            pm = pms[u]
            if t.pm_ptr[pm + 1] - t.pm_ptr[pm] != L:
                continue
            q = rest[pm] if L > 0 else -1
            if q >= 0 and t.loc[q] >= 0:
                _step(t, slot, _sym(t, pm, toward, L - 1), toward, out + t.loc[q] * N, out + u * N, sr)
            else:
                _apply(t, slot, pm, toward, vin, out + u * N, tmp, sr)
    for u in range(U):
        t.loc[pms[u]] = -1


cdef inline double _in(const Tree* t, const Store* st, num* buf, const num* P, int w, int toward,
                       const num* v, num* out, num* ts, num* ss, Semiring sr) noexcept nogil:
    """out = v moved across w's whole constituent (IN(w)·v toward LEFT, vᵀ·IN(w) toward RIGHT),
    from its stored rows: those of the near side (the one v enters by) are dotted with v, those
    of the far side summed.  Returns the log scale of the stored rows."""
    cdef int near = _other(toward), far = toward
    cdef int Nn = _N(t, _edge(t, w, near)), Nf = _N(t, _edge(t, w, far))
    cdef int Un = t.u_ptr[near][w + 1] - t.u_ptr[near][w], Uf = t.u_ptr[far][w + 1] - t.u_ptr[far][w]
    cdef const int* cn = t.cand_u[near]
    cdef const int* cf = t.cand_u[far]
    cdef const num* Fn = buf + st.fac[near][w]
    cdef const num* Ff = buf + st.fac[far][w]
    cdef int u, c, s
    for u in range(Un):
        ts[u] = _dot(Fn + u * Nn, v, Nn, sr)
    for u in range(Uf):
        ss[u] = 0
    for c in range(t.cand_ptr[w], t.cand_ptr[w + 1]):
        ss[cf[c]] = splus(ss[cf[c]], P[c] * ts[cn[c]], sr)
    _zero(out, Nf)
    for u in range(Uf):
        if _is_zero(ss[u]):
            continue
        for s in range(Nf):
            out[s] = splus(out[s], ss[u] * Ff[u * Nf + s], sr)
    return st.lfac[LEFT][w] + st.lfac[RIGHT][w]


cdef inline double _walk(const Tree* t, const Store* st, num* buf, const num* P, const int* run, int n_run,
                         int toward, num* v, num* v2, num* ts, num* ss, double lv, Semiring sr) noexcept nogil:
    """Move v toward ``toward`` across the adjacent constituents run[0..n_run) (toward LEFT: the
    last one first), storing at each the vector it is entered with: its context on the side the
    walk comes from.  Returns lv plus the log scales taken out of v."""
    cdef int back = _other(toward), q, c, N
    for q in range(n_run):
        c = run[n_run - 1 - q] if toward == LEFT else run[q]
        _copy(buf + st.ctx[back][c], v, _N(t, _edge(t, c, back)))
        lv += _in(t, st, buf, P, c, toward, v, v2, ts, ss, sr)
        N = _N(t, _edge(t, c, toward))
        lv += _normalize(v2, N)
        _copy(v, v2, N)
    return lv


# ------------------------------------------------------------------ the inside pass (bottom-up)
cdef inline void _inside_side(Pass* ps, num* buf, int w, int s) noexcept nogil:
    """Side s of w: from its word toward s across its dependents there (ML on the left, MR on
    the right), then across each of its punctemes on that side (the rows a_l or b_r)."""
    cdef Tree* t = ps.t
    cdef Store* st = ps.st
    cdef int e = _edge(t, w, s), N = _N(t, e), U = t.u_ptr[s][w + 1] - t.u_ptr[s][w], nk, i
    cdef const int* kids = _kids(t, w, s, &nk)
    cdef num* v = <num*>ps.v
    cdef num* F = buf + st.fac[s][w]
    cdef double lv, mxv = 0.0
    _boundary(t, _word_slot(w, s), s, v)
    lv = _walk(t, st, buf, <const num*>ps.P, kids, nk, s, v, <num*>ps.v2, <num*>ps.ts, <num*>ps.ss, 0.0,
               ps.semiring)
    _copy(buf + st.inner[s][w], v, N)
    _rows(t, e, t.u[s] + t.u_ptr[s][w], U, s, v, F, <num*>ps.tmp, ps.semiring)
    for i in range(U * N):
        if fabs(re(F[i])) > mxv:
            mxv = fabs(re(F[i]))
    if mxv > 0.0:
        for i in range(U * N):
            F[i] = F[i] / mxv
        st.lfac[s][w] = lv + log(mxv)
    else:
        st.lfac[s][w] = -INFINITY
        mxv = 1.0
    st.nfac[s][w] = mxv


cdef inline long _block(const Tree* t, int w) noexcept nogil:
    """Entries of w's stored rows, both sides (the a_l of N_first entries each, then the b_r)."""
    return (t.u_ptr[LEFT][w + 1] - t.u_ptr[LEFT][w]) * _N(t, _edge(t, w, LEFT)) + \
        (t.u_ptr[RIGHT][w + 1] - t.u_ptr[RIGHT][w]) * _N(t, _edge(t, w, RIGHT))


cdef inline void _place(Pass* ps, int w, long at) noexcept nogil:
    """w's rows at offset ``at`` of the buffer (compact layout): its left rows, then its right ones."""
    ps.st.fac[LEFT][w] = at
    ps.st.fac[RIGHT][w] = at + (ps.t.u_ptr[LEFT][w + 1] - ps.t.u_ptr[LEFT][w]) * _N(ps.t, _edge(ps.t, w, LEFT))


cdef long _compact_layout(const Tree* t, long* fin, long* at) noexcept nogil:
    """Where an inside pass without a top-down pass (``log_prob``) keeps the rows, as a stack:
    a node's rows are read only by its parent, so in post-order w's are computed above its
    dependents' (offset ``at[w]``), then moved down to where the first of them began
    (``fin[w]``), and a chain holds two nodes' rows instead of n (the stored layout of
    ``set_candidates``: ~260 KB a word on a chain where every constituent ends at one slot of
    112 states and 287 punctemes).  Returns the entries the rows need at most, or -1 when the
    order is not one in which a node's dependents' rows lie just below the top (then the
    stored layout serves)."""
    cdef long top = 0, peak = 0, base, kids_size, size
    cdef int oi, w, j, k
    for oi in range(t.n):
        w = t.order[oi]
        base = top
        kids_size = 0
        for j in range(t.kid_ptr[w], t.kid_ptr[w + 1]):
            k = t.kids[j]
            if fin[k] < base:
                base = fin[k]
            kids_size += _block(t, k)
        if top - base != kids_size:
            return -1
        size = _block(t, w)
        at[w] = top
        fin[w] = base
        if top + size > peak:
            peak = top + size
        top = base + size
    return peak


cdef double _inside(Pass* ps, num* buf) noexcept nogil:
    """Fills every node's rows, ML, MR and the contexts its inside walks set; returns
    log p(x|T) (SUM_PRODUCT, SAMPLING) or the best derivation's (MAX_PRODUCT)."""
    cdef Tree* t = ps.t
    cdef num* v = <num*>ps.v
    cdef num* v2 = <num*>ps.v2
    cdef int oi, w
    cdef long size
    cdef double lv, z
    for oi in range(t.n):
        w = t.order[oi]
        if ps.fin != NULL:  # compact rows (_compact_layout): w's computed above its dependents'
            _place(ps, w, ps.at[w])
        _inside_side(ps, buf, w, LEFT)   # (the side as a constant lets the compiler specialise)
        _inside_side(ps, buf, w, RIGHT)
        if ps.fin != NULL:  # ... then moved down over them (read only by w, now done)
            size = _block(t, w)
            if size > 0 and ps.fin[w] != ps.at[w]:
                memmove(buf + ps.fin[w], buf + ps.at[w], size * sizeof(num))
            _place(ps, w, ps.fin[w])
    # the sentence: from slot 0's start state across '^', then toward RIGHT across the roots,
    # closed by slot n's final state
    _boundary(t, 0, RIGHT, <num*>ps.tmp)
    _step(t, 0, BOS, RIGHT, <num*>ps.tmp, v, ps.semiring)
    lv = _normalize(v, _N(t, 0))
    lv = _walk(t, ps.st, buf, <const num*>ps.P, t.roots, t.n_roots, RIGHT, v, v2, <num*>ps.ts, <num*>ps.ss,
               lv, ps.semiring)
    _boundary(t, t.n, LEFT, v2)
    z = re(_dot(v, v2, _N(t, t.n), ps.semiring))
    if z <= 0.0:
        return -INFINITY
    return lv + log(z)


# ------------------------------------------------------------------ the top-down pass
cdef bint _choose(Pass* ps, num* buf, int w, num* zw) noexcept nogil:
    """Weigh w's candidates, P·(β·a_l)(b_r·γ), and choose under the semiring.  SUM/MAX_PRODUCT:
    their (max-)marginals into ``mu``, their total into ``zw``, and each puncteme's weight
    ⊕ P·(the other side's dot) into ts (left) and ss (right).  SAMPLING: draw one (the next
    uniform), record it, and give its punctemes weight 1.  False if w is unreachable (which
    cannot happen when p(x|T) > 0)."""
    cdef Tree* t = ps.t
    cdef Store* st = ps.st
    cdef const num* P = <const num*>ps.P
    cdef num* mu = <num*>ps.mu
    cdef num* ts = <num*>ps.ts
    cdef num* ss = <num*>ps.ss
    cdef num* tl = <num*>ps.tl
    cdef num* tr = <num*>ps.tr
    cdef num* dots[2]
    cdef Semiring sr = ps.semiring
    cdef const int* li = t.cand_u[LEFT]
    cdef const int* ri = t.cand_u[RIGHT]
    cdef int c0 = t.cand_ptr[w], c1 = t.cand_ptr[w + 1], s, u, N, c
    cdef long chosen = -1
    cdef double tot, acc, target
    cdef num z
    dots[LEFT] = tl
    dots[RIGHT] = tr
    for s in range(LEFT, RIGHT + 1):
        N = _N(t, _edge(t, w, s))
        for u in range(t.u_ptr[s][w + 1] - t.u_ptr[s][w]):
            dots[s][u] = _dot(buf + st.ctx[s][w], buf + st.fac[s][w] + u * N, N, sr)
    for u in range(t.u_ptr[LEFT][w + 1] - t.u_ptr[LEFT][w]):
        ts[u] = 0
    for u in range(t.u_ptr[RIGHT][w + 1] - t.u_ptr[RIGHT][w]):
        ss[u] = 0
    if sr == SAMPLING:
        tot = 0.0
        for c in range(c0, c1):
            mu[c] = P[c] * tl[li[c]] * tr[ri[c]]
            tot += re(mu[c])
        target = ps.uniforms[ps.next_u] * tot
        ps.next_u += 1
        acc = 0.0
        for c in range(c0, c1):
            chosen = c
            acc += re(mu[c])
            if acc > target:
                break
        ps.choice[w] = chosen
        ts[li[chosen]] = 1.0
        ss[ri[chosen]] = 1.0
        zw[0] = 1.0
        return True
    z = 0
    for c in range(c0, c1):
        mu[c] = P[c] * tl[li[c]] * tr[ri[c]]
        z = splus(z, mu[c], sr)
    if re(z) == 0.0:
        return False
    for c in range(c0, c1):
        mu[c] = mu[c] / z
        ts[li[c]] = splus(ts[li[c]], P[c] * tr[ri[c]], sr)
        ss[ri[c]] = splus(ss[ri[c]], P[c] * tl[li[c]], sr)
    zw[0] = z
    return True


cdef void _open(Pass* ps, num* buf, int w, int s, num zw) noexcept nogil:
    """acc = ⊕_u weight(u)·(w's context on side s moved inward across its puncteme u), normalised:
    β becomes the first left dependent's left context, γ the last right dependent's right
    context.  With ``want_counts``, the expected counts of the edits crossed on the way, whose
    inner halves are the stored ML / MR moved outward across the rest of the puncteme."""
    cdef Tree* t = ps.t
    cdef Store* st = ps.st
    cdef num* acc = <num*>ps.acc
    cdef num* g = <num*>ps.g
    cdef num* tmp = <num*>ps.tmp
    cdef num* part = <num*>ps.part
    cdef const num* wt = <num*>(ps.ts if s == LEFT else ps.ss)
    cdef const num* ctx = buf + st.ctx[s][w]
    cdef Semiring sr = ps.semiring
    cdef int toward = _other(s), e = _edge(t, w, s), N = _N(t, e)
    cdef int U = t.u_ptr[s][w + 1] - t.u_ptr[s][w], u, pm, n_sym, q, sigma, i
    cdef const int* pms = t.u[s] + t.u_ptr[s][w]
    cdef num coef
    _zero(acc, N)
    for u in range(U):
        if _is_zero(wt[u]):
            continue
        pm = pms[u]
        n_sym = t.pm_ptr[pm + 1] - t.pm_ptr[pm]
        if ps.want_counts and n_sym > 0:
            # part[q]: the inner vector moved outward across the q symbols next to it
            _copy(part, buf + st.inner[s][w], N)
            for q in range(1, n_sym):
                _step(t, e, _sym(t, pm, s, q - 1), s, part + (q - 1) * N, part + q * N, sr)
        _copy(g, ctx, N)
        coef = wt[u] / (zw * st.nfac[s][w])
        for q in range(n_sym - 1, -1, -1):
            sigma = _sym(t, pm, s, q)
            if ps.want_counts:
                if toward == RIGHT:
                    _count(t, e, sigma, g, part + q * N, coef, <num*>ps.counts)
                else:
                    _count(t, e, sigma, part + q * N, g, coef, <num*>ps.counts)
            _step(t, e, sigma, toward, g, tmp, sr)
            _copy(g, tmp, N)
        for i in range(N):
            acc[i] = splus(acc[i], wt[u] * g[i], sr)
    _normalize(acc, N)


cdef void _seal(Pass* ps, num* buf, int w, int s) noexcept nogil:
    """SAMPLING, once w's dependents on side s are drawn: w's drawn factor on that side (a* into
    ML[w], b* into MR[w]), from the drawn factor of its outermost dependent there (or the word
    boundary) moved outward across its drawn puncteme."""
    cdef Tree* t = ps.t
    cdef Store* st = ps.st
    cdef num* v = <num*>ps.v
    cdef num* v2 = <num*>ps.v2
    cdef int e = _edge(t, w, s), nk
    cdef const int* kids = _kids(t, w, s, &nk)
    cdef const num* src
    if nk > 0:
        src = buf + st.inner[s][_outermost(kids, nk, s)]
    else:
        _boundary(t, _word_slot(w, s), s, v)
        src = v
    _apply(t, e, _chosen(t, ps.choice[w], w, s), s, src, v2, <num*>ps.tmp, ps.semiring)
    _normalize(v2, _N(t, e))
    _copy(buf + st.inner[s][w], v2, _N(t, e))


cdef bint _enter(Pass* ps, num* buf, int w) noexcept nogil:
    """The top-down pass at w, whose contexts β = CL[w] and γ = CR[w] are set: choose (or draw)
    its candidates and set the contexts of its dependents (walked inward from its edges; in
    SAMPLING only the outermost left one's, the others' as their left neighbours are drawn).
    False if w is unreachable: then nothing below it is visited."""
    cdef Tree* t = ps.t
    cdef int s, nk
    cdef const int* kids
    cdef num zw
    if not _choose(ps, buf, w, &zw):
        return False
    for s in range(LEFT, RIGHT + 1):
        kids = _kids(t, w, s, &nk)
        if nk == 0 and not ps.want_counts:
            continue  # no context to pass on, no counts to take
        _open(ps, buf, w, s, zw)
        if ps.semiring == SAMPLING and s == LEFT:
            # the other left dependents get their left contexts as they are drawn (_descend)
            _copy(buf + ps.st.ctx[LEFT][_outermost(kids, nk, LEFT)], <num*>ps.acc, _N(t, _edge(t, w, LEFT)))
        else:
            _walk(t, ps.st, buf, <const num*>ps.P, kids, nk, _other(s), <num*>ps.acc, <num*>ps.v2,
                  <num*>ps.tl, <num*>ps.tr, 0.0, ps.semiring)
    return True


cdef void _descend(Pass* ps, num* buf) noexcept nogil:
    """The top-down pass below the sentence, in pre-order, left to right: every root's subtree,
    each node :func:`_enter`-ed, then its left dependents' subtrees, then its right ones'
    (SAMPLING: a sibling's left context is its left neighbour's drawn right factor, and a side
    is sealed once its dependents are drawn).  On an explicit stack (``ps.stack``), not the C
    stack: a frame per open node (the node, -1 for the sentence; the side whose dependents are
    being visited; the next of them), at most n + 1 frames."""
    cdef Tree* t = ps.t
    cdef int* frame = ps.stack
    cdef int top = 0, w, s, q, nk, c
    cdef const int* kids
    cdef bint sampling = ps.semiring == SAMPLING
    frame[0] = -1       # the sentence: its dependents are the roots, on its only side
    frame[1] = RIGHT
    frame[2] = 0
    while top >= 0:
        w = frame[3 * top]
        s = frame[3 * top + 1]
        q = frame[3 * top + 2]
        if w < 0:
            kids = t.roots
            nk = t.n_roots
        else:
            kids = _kids(t, w, s, &nk)
        if q < nk:
            c = kids[q]
            frame[3 * top + 2] = q + 1
            if sampling and q > 0:
                _copy(buf + ps.st.ctx[LEFT][c], buf + ps.st.inner[RIGHT][kids[q - 1]], _N(t, _edge(t, c, LEFT)))
            if _enter(ps, buf, c):
                top += 1
                frame[3 * top] = c
                frame[3 * top + 1] = LEFT
                frame[3 * top + 2] = 0
        else:  # the side's dependents are done
            if w >= 0 and sampling:
                _seal(ps, buf, w, s)
            if w >= 0 and s == LEFT:
                frame[3 * top + 1] = RIGHT
                frame[3 * top + 2] = 0
            else:
                top -= 1


cdef void _down_sentence(Pass* ps, num* buf) noexcept nogil:
    """The top-down pass from the sentence: the roots' right contexts (a walk toward LEFT from
    slot n's final state), the counts of the '^' arcs, then every root's subtree."""
    cdef Tree* t = ps.t
    cdef num* acc = <num*>ps.acc
    cdef num* g = <num*>ps.g
    cdef num* tmp = <num*>ps.tmp
    cdef num zw
    _boundary(t, t.n, LEFT, acc)
    _walk(t, ps.st, buf, <const num*>ps.P, t.roots, t.n_roots, LEFT, acc, <num*>ps.v2, <num*>ps.tl,
          <num*>ps.tr, 0.0, ps.semiring)
    if ps.want_counts:
        # acc is now at slot 0; the '^' arcs carry parameters (in R2L)
        _boundary(t, 0, RIGHT, tmp)
        _step(t, 0, BOS, RIGHT, tmp, g, ps.semiring)
        zw = _dot(g, acc, _N(t, 0), ps.semiring)
        _count(t, 0, BOS, tmp, acc, 1.0 / zw, <num*>ps.counts)
    _descend(ps, buf)


# ------------------------------------------------------------------ one lattice's arrays
cdef class _Workspace:
    """A lattice's Tree and Store, and the sizes of a pass's buffers."""
    cdef Tree t
    cdef Store st
    cdef Slot* slots
    cdef long total       # entries of the buffer (every node's rows, ML, MR, CL, CR)
    cdef int maxN, maxU, maxSym
    cdef object keep      # references to the arrays behind the pointers
    cdef long[::1] offs
    cdef double[::1] scales
    cdef int[::1] loc
    cdef int[::1] frames  # the top-down pass's stack (Pass.stack)

    def __cinit__(self):
        self.slots = NULL

    def __dealloc__(self):
        if self.slots != NULL:
            free(self.slots)

    cdef void setup(self, object lat, object grammar, double[:, :, ::1] phi, bint r2l) except *:
        """Point the workspace at ``lat``'s tree and candidates (``lat`` keeps its arrays alive)."""
        self.setup_tree(lat, grammar, phi, r2l)
        cdef int[::1] cand_ptr = lat.cand_ptr, cand_li = lat.cand_li, cand_ri = lat.cand_ri
        cdef int[::1] ul_ptr = lat.ul_ptr, ul = lat.ul, ur_ptr = lat.ur_ptr, ur = lat.ur
        self.set_candidates(&cand_ptr[0], &cand_li[0], &cand_ri[0], &ul_ptr[0], &ul[0], &ur_ptr[0], &ur[0])

    cdef void setup_tree(self, object lat, object grammar, double[:, :, ::1] phi, bint r2l) except *:
        """The tree, slot and grammar fields (everything but the candidates): one setup serves
        every candidate set of the lattice (:meth:`set_candidates`)."""
        cdef int n = lat.n, S = grammar.n_symbols, i
        cdef int[::1] x_ptr = lat.x_ptr_r if r2l else lat.x_ptr
        cdef int[::1] x_sym = lat.x_sym_r if r2l else lat.x_sym
        cdef int[::1] first = lat.first, last = lat.last, kid_ptr = lat.kid_ptr, kids = lat.kids
        cdef int[::1] nleft = lat.nleft, order = lat.order, roots = lat.roots
        cdef int[::1] pm_ptr = grammar.pm_ptr, pm_sym = grammar.pm_sym
        cdef int[::1] pm_tail = grammar.pm_tail, pm_head = grammar.pm_head
        cdef int n_pm = pm_ptr.shape[0] - 1
        if pm_tail.shape[0] != n_pm or pm_head.shape[0] != n_pm:
            raise ValueError(Errors.E150)
        self.loc = np.full(max(n_pm, 1), -1, dtype=np.int32)
        self.frames = np.zeros(3 * (n + 1), dtype=np.int32)
        if phi.shape[0] != S or phi.shape[1] != S or phi.shape[2] != 4:
            raise ValueError(Errors.E151.format(S=S, shape=tuple(phi.shape)[:3]))
        self.keep = (lat, grammar, phi, pm_tail, pm_head)
        self.slots = <Slot*>malloc((n + 1) * sizeof(Slot))
        if self.slots == NULL:
            raise MemoryError()
        self.maxN = 1
        self.maxSym = 1
        free_slots = getattr(lat, "free", None)
        cdef const unsigned char[::1] free_at = free_slots if free_slots is not None else np.zeros(n + 1, np.uint8)
        if free_at.shape[0] != n + 1:
            raise ValueError(Errors.E190.format(n=n + 1, got=free_at.shape[0]))
        for i in range(n + 1):
            self.slots[i].free = free_at[i] != 0
            self.slots[i].m = 0 if free_at[i] else x_ptr[i + 1] - x_ptr[i]
            self.slots[i].x = &x_sym[x_ptr[i]] if self.slots[i].m > 0 else NULL
            self.slots[i].N = 1 + self.slots[i].m * S
            if self.slots[i].N > self.maxN:
                self.maxN = self.slots[i].N
        for i in range(n_pm):
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
        self.t.pm_ptr = &pm_ptr[0]
        self.t.pm_sym = &pm_sym[0] if pm_sym.shape[0] > 0 else NULL
        self.t.pm_rest[LEFT] = &pm_tail[0]   # a walk toward LEFT crosses the first symbol last
        self.t.pm_rest[RIGHT] = &pm_head[0]
        self.t.loc = &self.loc[0]
        self.t.max_len = self.maxSym
        self.t.slots = self.slots
        self.t.phi = &phi[0, 0, 0]
        self.t.r2l = r2l
        self.offs = np.zeros(6 * n, dtype=np.int64)
        self.scales = np.zeros(4 * n, dtype=np.float64)
        for i in range(LEFT, RIGHT + 1):
            self.st.fac[i] = &self.offs[i * n]
            self.st.inner[i] = &self.offs[(2 + i) * n]
            self.st.ctx[i] = &self.offs[(4 + i) * n]
            self.st.lfac[i] = &self.scales[i * n]
            self.st.nfac[i] = &self.scales[(2 + i) * n]

    cdef void set_candidates(self, const int* cand_ptr, const int* cand_li, const int* cand_ri,
                             const int* ul_ptr, const int* ul, const int* ur_ptr, const int* ur) noexcept:
        """The candidate fields (``dp.Lattice``'s, of the tree :meth:`setup_tree` gave; the caller
        keeps them alive) and where each node's vectors live in a pass's buffer."""
        cdef int n = self.t.n, w, i, Ni, Nk, UL, UR
        cdef long size[6]
        self.t.cand_ptr = cand_ptr
        self.t.cand_u[LEFT] = cand_li
        self.t.cand_u[RIGHT] = cand_ri
        self.t.u_ptr[LEFT] = ul_ptr
        self.t.u_ptr[RIGHT] = ur_ptr
        self.t.u[LEFT] = ul
        self.t.u[RIGHT] = ur
        # per node, contiguous: A, B, ML, MR, CL, CR
        self.maxU = 1
        self.total = 0
        for w in range(n):
            Ni = self.slots[self.t.first[w]].N
            Nk = self.slots[self.t.last[w] + 1].N
            UL = ul_ptr[w + 1] - ul_ptr[w]
            UR = ur_ptr[w + 1] - ur_ptr[w]
            if UL > self.maxU:
                self.maxU = UL
            if UR > self.maxU:
                self.maxU = UR
            size[0] = UL * Ni
            size[1] = UR * Nk
            size[2] = size[4] = Ni
            size[3] = size[5] = Nk
            for i in range(6):
                self.offs[i * n + w] = self.total
                self.total += size[i]

    cdef object compact(self):
        """:func:`_compact_layout`'s array for this lattice's candidates (2n row offsets, then
        ``fin``, ``at``, and n copies of the offset of the vector that takes the inside pass's
        other stores, which is also the rows' peak), or None where that layout does not apply."""
        cdef long n = self.t.n, peak, i
        out = np.zeros(5 * max(n, 1), dtype=np.int64)
        cdef long[::1] a = out
        if n == 0:
            return None
        peak = _compact_layout(&self.t, &a[2 * n], &a[3 * n])
        if peak < 0:
            return None
        for i in range(n):
            a[4 * n + i] = peak
        return out

    cdef long scratch_size(self):
        return 6 * self.maxN + 4 * (self.maxU + 1) + self.maxN * self.maxSym + 8


cdef void _start(Pass* ps, _Workspace ws, Semiring sr, num* buf, const num* P, num* mu, num* counts,
                 num* scratch):
    """Point ``ps`` at ``ws``'s lattice and at buffers of ``ws.total``, K, S·S·4 and
    ``ws.scratch_size()`` entries."""
    cdef int N = ws.maxN, U = ws.maxU + 1
    ps.semiring = sr
    ps.want_counts = False
    ps.t = &ws.t
    ps.st = &ws.st
    ps.buf = buf
    ps.P = P
    ps.mu = mu
    ps.counts = counts
    ps.choice = NULL
    ps.uniforms = NULL
    ps.next_u = 0
    ps.stack = &ws.frames[0]
    ps.fin = NULL
    ps.at = NULL
    ps.v = scratch
    ps.v2 = scratch + N
    ps.tmp = scratch + 2 * N
    ps.g = scratch + 3 * N
    ps.acc = scratch + 4 * N
    ps.ts = scratch + 6 * N
    ps.ss = scratch + 6 * N + U
    ps.tl = scratch + 6 * N + 2 * U
    ps.tr = scratch + 6 * N + 3 * U
    ps.part = scratch + 6 * N + 4 * U


# ------------------------------------------------------------------ the Python API
cdef double _run(_Workspace ws, Semiring sr, num[::1] P, num[::1] buf, num[::1] scratch, num[::1] mu,
                 num[::1] counts, bint top_down, bint want_counts, long[::1] compact=None):
    """One pass; ``compact`` (inside only: :meth:`_Workspace.compact`'s array), the rows stacked
    and everything else the inside pass stores (ML, MR, contexts: read only by a top-down pass)
    written to one vector at its end, ``buf`` having ``compact[4n]`` + maxN entries."""
    cdef Pass ps
    cdef Store cst
    cdef double logZ
    cdef int n = ws.t.n
    _start(&ps, ws, sr, &buf[0], &P[0], &mu[0], &counts[0], &scratch[0])
    ps.want_counts = want_counts
    if compact is not None and not top_down:
        cst = ws.st
        cst.fac[LEFT] = &compact[0]
        cst.fac[RIGHT] = &compact[n]
        cst.inner[LEFT] = cst.inner[RIGHT] = cst.ctx[LEFT] = cst.ctx[RIGHT] = &compact[4 * n]
        ps.st = &cst
        ps.fin = &compact[2 * n]
        ps.at = &compact[3 * n]
    with nogil:
        logZ = _inside(&ps, &buf[0])
        if top_down and logZ > -INFINITY:
            _down_sentence(&ps, &buf[0])
    return logZ


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
    if mode not in ("sum", "max"):
        raise ValueError(Errors.E152.format(mode=mode))
    cdef Semiring sr = MAX_PRODUCT if mode == "max" else SUM_PRODUCT
    cdef _Workspace ws = _Workspace()
    ws.setup(lat, grammar, phi, r2l)
    cdef int S = grammar.n_symbols
    cdef long K = lat.cand_li.shape[0]
    P = np.ascontiguousarray(cand_p, dtype=np.float64)
    if P.shape[0] != K:
        raise ValueError(Errors.E153.format(got=P.shape[0], K=K))
    mu = np.zeros(K, dtype=np.float64)
    if counts_out is None:
        cnt = np.zeros(S * S * 4, dtype=np.float64)
    else:
        cnt = counts_out
        if cnt.dtype != np.float64 or cnt.size != S * S * 4 or not cnt.flags.c_contiguous:
            raise ValueError(Errors.E154.format(size=S * S * 4))
        cnt = cnt.reshape(-1)
    compact = None if outside else ws.compact()  # the inside pass alone: the rows as a stack
    size = ws.total if compact is None else compact[4 * lat.n] + ws.maxN
    logZ = _run[double](ws, sr, P, np.zeros(max(size, 1), dtype=np.float64),
                        np.zeros(ws.scratch_size(), dtype=np.float64), mu, cnt, outside,
                        counts and sr == SUM_PRODUCT, compact)
    dmu = dcnt = None
    if tilt is not None and sr == SUM_PRODUCT and logZ > -np.inf and outside:
        h = np.ascontiguousarray(tilt, dtype=np.float64)
        Pc = P * (1.0 + 1j * tilt_step * h)
        muc = np.zeros(K, dtype=np.complex128)
        cntc = np.zeros(S * S * 4, dtype=np.complex128)
        _run[cython.doublecomplex](ws, SUM_PRODUCT, Pc, np.zeros(max(ws.total, 1), dtype=np.complex128),
                                   np.zeros(ws.scratch_size(), dtype=np.complex128), muc, cntc, True, counts)
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
    cdef int n = lat.n, n_samples = uniforms.shape[0], si
    if uniforms.shape[1] != n:
        raise ValueError(Errors.E155.format(n=n, got=uniforms.shape[1]))
    cdef double[::1] P = np.ascontiguousarray(cand_p, dtype=np.float64)
    if P.shape[0] != K:
        raise ValueError(Errors.E153.format(got=P.shape[0], K=K))
    cdef double[::1] buf = np.zeros(max(ws.total, 1), dtype=np.float64)
    cdef double[::1] scratch = np.zeros(ws.scratch_size(), dtype=np.float64)
    cdef double[::1] weights = np.zeros(max(K, 1), dtype=np.float64)
    cdef long[:, ::1] choices = np.full((n_samples, n), -1, dtype=np.int64)
    cdef Pass ps
    cdef double logZ
    _start(&ps, ws, SAMPLING, &buf[0], &P[0], &weights[0], &weights[0], &scratch[0])
    with nogil:
        logZ = _inside(&ps, &buf[0])
        if logZ > -INFINITY:
            for si in range(n_samples):
                ps.uniforms = &uniforms[si, 0]
                ps.next_u = 0
                ps.choice = &choices[si, 0]
                _down_sentence(&ps, &buf[0])
    return logZ, np.asarray(choices)


# ------------------------------------------------------------------ compiling a lattice's candidates
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


cdef void _both_sides_unique(long n, long n_pm, const long* cand_l, const long* cand_r, const int* cand_ptr,
                             int* stamp, int* rank, int* ul_ptr, int* ul, int* li, int* ur_ptr, int* ur,
                             int* ri) noexcept nogil:
    """:func:`_per_node_unique` of the left punctemes (into ``ul_ptr``, ``ul``, ``li``), then of the
    right ones (``ur_ptr``, ``ur``, ``ri``); ``stamp`` and ``rank``: scratch of ``max(n_pm, 1)``."""
    cdef long k, m = max(n_pm, 1)
    for k in range(m):
        stamp[k] = -1
    _per_node_unique(n, n_pm, cand_l, cand_ptr, stamp, rank, ul_ptr, ul, li)
    for k in range(m):
        stamp[k] = -1
    _per_node_unique(n, n_pm, cand_r, cand_ptr, stamp, rank, ur_ptr, ur, ri)


def candidate_fields(long n, long n_pm, const long[::1] cand_l, const long[::1] cand_r,
                     const long[::1] node):
    """The candidate index arrays of a lattice (see ``dp._candidate_fields``): ``cand_ptr``,
    ``cand_li``, ``cand_ri``, ``ul_ptr``, ``ul``, ``ur_ptr``, ``ur`` (int32; ``ul``/``ur`` are
    ``[0]`` when empty).  ``node`` must be non-decreasing and every value in ``0..n_pm-1``."""
    cdef long K = node.shape[0], k
    if cand_l.shape[0] != K or cand_r.shape[0] != K:
        raise ValueError(Errors.E156)
    for k in range(K):
        if node[k] < 0 or node[k] >= n or (k > 0 and node[k] < node[k - 1]):
            raise ValueError(Errors.E157)
        if cand_l[k] < 0 or cand_l[k] >= n_pm or cand_r[k] < 0 or cand_r[k] >= n_pm:
            raise ValueError(Errors.E158.format(k=k, last=n_pm - 1))
    # two int32 allocations instead of nine (a NumPy allocation costs more than filling it, and
    # this runs for every lattice analysed): ``out`` holds the returned per-node and
    # per-candidate arrays (views of it, nothing else in it), ``scratch`` the rest
    cdef long m = max(n_pm, 1), Km = max(K, 1)
    out = np.zeros(3 * (n + 1) + 2 * K, dtype=np.int32)
    scratch = np.empty(2 * m + 2 * Km, dtype=np.int32)
    cdef int[::1] ov = out
    cdef int[::1] sv = scratch
    cdef int* cand_ptr = &ov[0]
    cdef int* ul_ptr = cand_ptr + (n + 1)
    cdef int* ur_ptr = ul_ptr + (n + 1)
    cdef int* li = ur_ptr + (n + 1)
    cdef int* ri = li + K
    cdef int* stamp = &sv[0]
    cdef int* rank = stamp + m
    cdef int* ul = rank + m
    cdef int* ur = ul + Km
    for k in range(K):
        cand_ptr[node[k] + 1] += 1
    for k in range(n):
        cand_ptr[k + 1] += cand_ptr[k]
    if K:
        with nogil:
            _both_sides_unique(n, n_pm, &cand_l[0], &cand_r[0], cand_ptr, stamp, rank, ul_ptr, ul, li,
                               ur_ptr, ur, ri)
    cdef long nl = max(ul_ptr[n], 1), nr = max(ur_ptr[n], 1), o = 3 * (n + 1)
    if not K:
        ul[0] = ur[0] = 0
    return (out[:n + 1], out[o:o + K], out[o + K:o + 2 * K], out[n + 1:2 * (n + 1)],
            scratch[2 * m:2 * m + nl].copy(), out[2 * (n + 1):o], scratch[2 * m + Km:2 * m + Km + nr].copy())


# ------------------------------------------------------------------ compiling a whole lattice
def compile_lattice(list children, list roots, list order, list first, list last, list slot_syms,
                    long n_symbols, long n_pm, const long[::1] rel_ids, const long[::1] tab_ptr,
                    const long[:, ::1] tab_pairs, free=None):
    """Every array of a :class:`~spacy_punctgen.inference.dp.Lattice` in one compiled pass
    (``dp.build_lattice``'s arrays, equal to the element): the tree fields from
    ``tree_structure``'s lists, the surface symbols from ``slot_syms`` (n + 1 lists), and the
    candidates of node ``w``: rows ``tab_ptr[r]:tab_ptr[r+1]`` of ``tab_pairs`` with
    ``r = rel_ids[w]``, less those with a non-empty half on an empty slot (``slot_syms``: lists or
    tuples of ints).  Returns a dict of
    the fields, or None when a symbol or a puncteme id is out of range (the caller then takes
    the checked path, which names the fault).  ``free`` (uint8, n + 1, or None): the slots whose
    surface is not observed (any half may land there; the lattice's ``free``)."""
    cdef long n = len(first), w, i, j, k, c, s, nk = 0, nsym = 0, K = 0, kept = 0, r, a, b, nl, max_sym = 0
    cdef list x
    cdef object xs
    if len(slot_syms) != n + 1 or rel_ids.shape[0] != n:
        return None
    free_o = None if free is None else np.ascontiguousarray(free, dtype=np.uint8)
    if free_o is not None and free_o.shape[0] != n + 1:
        return None
    cdef const unsigned char[::1] free_at = free_o if free_o is not None else np.zeros(n + 1, np.uint8)
    # the returned arrays are these ndarrays (an ndarray made from a typed memoryview would keep
    # three collector-tracked objects alive per array); the memoryviews only fill them
    first_o, last_o, order_o, nleft_o = (np.empty(n, dtype=np.int32) for _ in range(4))
    roots_o, kid_ptr_o = np.empty(len(roots), dtype=np.int32), np.empty(n + 1, dtype=np.int32)
    cdef int[::1] first_a = first_o, last_a = last_o, order_a = order_o, nleft = nleft_o
    cdef int[::1] roots_a = roots_o, kid_ptr = kid_ptr_o
    for w in range(n):
        first_a[w] = first[w]
        last_a[w] = last[w]
        order_a[w] = order[w]
        nk += len(<list>children[w])
    for w in range(len(roots)):
        roots_a[w] = roots[w]
    kids_o = np.zeros(max(nk, 1), dtype=np.int32)
    cdef int[::1] kids = kids_o
    kid_ptr[0] = 0
    for w in range(n):
        x = sorted(<list>children[w])
        nl = 0
        for j in range(len(x)):
            c = x[j]
            kids[kid_ptr[w] + j] = <int>c
            if c < w:
                nl += 1
        kid_ptr[w + 1] = kid_ptr[w] + <int>len(x)
        nleft[w] = <int>nl
    x_ptr_o = np.zeros(n + 2, dtype=np.int32)
    cdef int[::1] x_ptr = x_ptr_o
    cdef long[::1] slot_len = np.empty(n + 1, dtype=np.int64)
    for i in range(n + 1):
        slot_len[i] = len(slot_syms[i])
        x_ptr[i + 1] = x_ptr[i] + <int>slot_len[i]
    nsym = x_ptr[n + 1]
    x_sym_o, x_sym_r_o = np.zeros(max(nsym, 1), dtype=np.int32), np.zeros(max(nsym, 1), dtype=np.int32)
    cdef int[::1] x_sym = x_sym_o, x_sym_r = x_sym_r_o
    for i in range(n + 1):
        xs = slot_syms[i]  # a list or a tuple of ints
        for j in range(slot_len[i]):
            s = xs[j]
            if s < 0 or s >= n_symbols:
                return None
            if s > max_sym:
                max_sym = s
            x_sym[x_ptr[i] + j] = <int>s
            x_sym_r[x_ptr[i] + slot_len[i] - 1 - j] = <int>s
    # candidates: count, then fill the kept ones in node order
    for w in range(n):
        r = rel_ids[w]
        if r < 0 or r + 1 >= tab_ptr.shape[0]:
            return None
        K += tab_ptr[r + 1] - tab_ptr[r]
    cl_o, cr_o, cnode_o = np.empty(K, dtype=np.int64), np.empty(K, dtype=np.int64), np.empty(K, dtype=np.int64)
    crow_o = np.empty(K, dtype=np.int32)
    cdef long[::1] cl = cl_o, cr = cr_o, cnode = cnode_o
    cdef int[::1] crow = crow_o
    cdef long max_pm = 0
    for w in range(n):
        r = rel_ids[w]
        for k in range(tab_ptr[r], tab_ptr[r + 1]):
            a = tab_pairs[k, 0]
            b = tab_pairs[k, 1]
            if a < 0 or a >= n_pm or b < 0 or b >= n_pm:
                return None
            # a non-empty half must land on a non-empty surface slot (the channel never inserts)
            # or on a free one
            if (a != 0 and slot_len[first_a[w]] == 0 and not free_at[first_a[w]]) or \
                    (b != 0 and slot_len[last_a[w] + 1] == 0 and not free_at[last_a[w] + 1]):
                continue
            cl[kept] = a
            cr[kept] = b
            cnode[kept] = w
            crow[kept] = <int>(k - tab_ptr[r])
            if a > max_pm:
                max_pm = a
            if b > max_pm:
                max_pm = b
            kept += 1
    cl_o, cr_o, cnode_o = cl_o[:kept], cr_o[:kept], cnode_o[:kept]
    cand_ptr, li, ri, ul_ptr, ul, ur_ptr, ur = candidate_fields(n, n_pm, cl_o, cr_o, cnode_o)
    return dict(first=first_o, last=last_o, kid_ptr=kid_ptr_o, kids=kids_o, nleft=nleft_o, order=order_o,
                roots=roots_o, x_ptr=x_ptr_o, x_sym=x_sym_o, x_ptr_r=x_ptr_o.copy(), x_sym_r=x_sym_r_o,
                max_symbol=max_sym, cand_ptr=cand_ptr, cand_li=li, cand_ri=ri,
                cand_l=cl_o.astype(np.int32), cand_r=cr_o.astype(np.int32), cand_node=cnode_o.astype(np.int32),
                cand_row=crow_o[:kept].copy(), ul_ptr=ul_ptr, ul=ul, ur_ptr=ur_ptr, ur=ur, max_puncteme=max_pm,
                free=free_o)


def restrict_candidates(long n, long n_pm, const int[::1] cand_l, const int[::1] cand_r,
                        const int[::1] cand_node, const int[::1] cand_row, const unsigned char[::1] keep):
    """The candidate fields of a lattice with only the candidates where ``keep`` is non-zero
    (``dp.restrict_lattice``): equal to those of ``dp._candidate_fields`` of the kept ones."""
    cdef long K = cand_l.shape[0], k, kept = 0, max_pm = 0
    if cand_r.shape[0] != K or cand_node.shape[0] != K or cand_row.shape[0] != K or keep.shape[0] != K:
        raise ValueError(Errors.E156)
    for k in range(K):
        if keep[k]:
            kept += 1
    cl_o, cr_o, cnode_o = np.empty(kept, dtype=np.int64), np.empty(kept, dtype=np.int64), np.empty(kept, dtype=np.int64)
    crow_o = np.empty(kept, dtype=np.int32)
    cdef long[::1] cl = cl_o, cr = cr_o, cnode = cnode_o
    cdef int[::1] crow = crow_o
    kept = 0
    for k in range(K):
        if keep[k]:
            cl[kept] = cand_l[k]
            cr[kept] = cand_r[k]
            cnode[kept] = cand_node[k]
            crow[kept] = cand_row[k]
            if cand_l[k] > max_pm:
                max_pm = cand_l[k]
            if cand_r[k] > max_pm:
                max_pm = cand_r[k]
            kept += 1
    cand_ptr, li, ri, ul_ptr, ul, ur_ptr, ur = candidate_fields(n, n_pm, cl_o, cr_o, cnode_o)
    return dict(cand_ptr=cand_ptr, cand_li=li, cand_ri=ri, cand_l=cl_o.astype(np.int32),
                cand_r=cr_o.astype(np.int32), cand_node=cnode_o.astype(np.int32), cand_row=crow_o,
                ul_ptr=ul_ptr, ul=ul, ur_ptr=ur_ptr, ur=ur, max_puncteme=max_pm)


cdef void _node_argmax(const double* mu, const int* cand_ptr, long n, long* best) noexcept nogil:
    """:func:`node_argmax` into ``best`` (n entries)."""
    cdef long w, k, at
    cdef double top
    for w in range(n):
        best[w] = -1
        if cand_ptr[w] >= cand_ptr[w + 1]:
            continue
        at = cand_ptr[w]
        top = mu[at]
        if top != top:
            best[w] = at
            continue
        for k in range(cand_ptr[w] + 1, cand_ptr[w + 1]):
            if mu[k] != mu[k]:
                at = k
                break
            if mu[k] > top:
                top = mu[k]
                at = k
        best[w] = at


def node_argmax(const double[::1] mu, const int[::1] cand_ptr):
    """Per node, the index of its first candidate of greatest ``mu`` (``np.argmax`` over the
    node's slice: the first NaN if there is one); -1 for a node without candidates."""
    cdef long n = max(cand_ptr.shape[0] - 1, 0)
    out = np.full(n, -1, dtype=np.int64)
    cdef long[::1] best = out
    if n > 0:
        _node_argmax(&mu[0] if mu.shape[0] > 0 else NULL, &cand_ptr[0], n, &best[0])
    return out


def surface_producible(lat, grammar, const double[::1] p):
    """Whether every slot's surface marks could come from the underlying punctemes its
    candidates of positive weight put there: a necessary condition of ``p(x|T) > 0`` (False:
    the sentence is impossible).  The channel writes each underlying symbol at most once and
    inserts none, so a slot's surface marks (slot 0's after its ``^``) are at most as many as
    the longest punctemes of its node sides together, and each is a symbol of one of them."""
    cdef const int[::1] cand_ptr = lat.cand_ptr, cand_l = lat.cand_l, cand_r = lat.cand_r
    cdef const int[::1] first = lat.first, last = lat.last, x_ptr = lat.x_ptr, x_sym = lat.x_sym
    cdef const int[::1] pm_ptr = grammar.pm_ptr, pm_sym = grammar.pm_sym
    cdef long n = lat.n, S = grammar.n_symbols, w, k, i, j, side, pm, slot, longest
    avail_arr = np.zeros((n + 1) * S, dtype=np.uint8)
    lens_arr = np.zeros(n + 1, dtype=np.int64)
    cdef unsigned char[::1] avail = avail_arr
    cdef long[::1] lens = lens_arr
    for w in range(n):
        for side in range(2):
            slot = first[w] if side == LEFT else last[w] + 1
            longest = 0
            for k in range(cand_ptr[w], cand_ptr[w + 1]):
                pm = cand_l[k] if side == LEFT else cand_r[k]
                if pm == 0 or not p[k] > 0:
                    continue
                if pm_ptr[pm + 1] - pm_ptr[pm] > longest:
                    longest = pm_ptr[pm + 1] - pm_ptr[pm]
                for j in range(pm_ptr[pm], pm_ptr[pm + 1]):
                    avail[slot * S + pm_sym[j]] = 1
            lens[slot] += longest
    for i in range(n + 1):
        j = x_ptr[i] + 1 if i == 0 else x_ptr[i]  # (slot 0's ^ is the sentence's own)
        if x_ptr[i + 1] - j > lens[i]:
            return False
        for j in range(j, x_ptr[i + 1]):
            if not avail[i * S + x_sym[j]]:
                return False
    return True


# ------------------------------------------------------------------ Viterbi over the candidates that can win
cdef class _Bounded:
    """The memory of one bounded Viterbi call (``viterbi_bounded``): the full lattice's workspace,
    the candidate fields of a restricted lattice (the kept candidates' fields, as
    ``restrict_candidates`` gives them), the kept candidates' indices in the lattice and their
    weights, and one buffer for a max pass's vectors, scratch and max-marginals (sized for the
    full lattice, the largest of the passes)."""
    cdef _Workspace ws
    cdef long n, K, n_pm
    cdef const int* full[7]     # the lattice's cand_ptr, cand_li, cand_ri, ul_ptr, ul, ur_ptr, ur
    cdef const int* cand_l      # the lattice's cand_l, cand_r
    cdef const int* cand_r
    cdef int* sub[7]            # a restricted lattice's fields, the same seven
    cdef long* idx              # its candidate j is candidate idx[j] of the lattice
    cdef double* pk             # whose weight is pk[j]
    cdef long* col              # scratch: the kept candidates' left, then right punctemes
    cdef int* stamp             # scratch, one per puncteme
    cdef int* rank
    cdef double* mem
    cdef object arrays          # the lattice's arrays behind ``full``, ``cand_l``, ``cand_r``

    def __cinit__(self):
        cdef int i
        self.idx = NULL
        self.pk = NULL
        self.col = NULL
        self.stamp = NULL
        self.rank = NULL
        self.mem = NULL
        for i in range(7):
            self.sub[i] = NULL

    def __dealloc__(self):
        cdef int i
        free(self.idx)
        free(self.pk)
        free(self.col)
        free(self.stamp)
        free(self.rank)
        free(self.mem)
        for i in range(7):
            free(self.sub[i])

    cdef void setup(self, lat, grammar, double[:, :, ::1] phi, bint r2l, long n_pm) except *:
        cdef int[::1] cand_ptr = lat.cand_ptr, cand_li = lat.cand_li, cand_ri = lat.cand_ri
        cdef int[::1] ul_ptr = lat.ul_ptr, ul = lat.ul, ur_ptr = lat.ur_ptr, ur = lat.ur
        cdef int[::1] cand_l = np.ascontiguousarray(lat.cand_l, dtype=np.int32)
        cdef int[::1] cand_r = np.ascontiguousarray(lat.cand_r, dtype=np.int32)
        cdef long n = lat.n, K = cand_li.shape[0], m = max(n_pm, 1), Km = max(K, 1)
        cdef int i
        self.n, self.K, self.n_pm = n, K, n_pm
        self.arrays = (lat, cand_l, cand_r)
        self.ws = _Workspace()
        self.ws.setup(lat, grammar, phi, r2l)
        self.full[0], self.full[1], self.full[2] = &cand_ptr[0], &cand_li[0], &cand_ri[0]
        self.full[3], self.full[4], self.full[5], self.full[6] = &ul_ptr[0], &ul[0], &ur_ptr[0], &ur[0]
        self.cand_l, self.cand_r = &cand_l[0], &cand_r[0]
        for i in range(7):  # per node (n + 1 entries) or per candidate
            self.sub[i] = <int*>malloc((n + 1 if i == 0 or i == 3 or i == 5 else Km) * sizeof(int))
            if self.sub[i] == NULL:
                raise MemoryError()
        self.idx = <long*>malloc(Km * sizeof(long))
        self.pk = <double*>malloc(Km * sizeof(double))
        self.col = <long*>malloc(2 * Km * sizeof(long))
        self.stamp = <int*>malloc(m * sizeof(int))
        self.rank = <int*>malloc(m * sizeof(int))
        self.mem = <double*>malloc((max(self.ws.total, 1) + self.ws.scratch_size() + Km) * sizeof(double))
        if self.idx == NULL or self.pk == NULL or self.col == NULL or self.stamp == NULL or self.rank == NULL \
                or self.mem == NULL:
            raise MemoryError()

    cdef long restrict(self, const double* p, const unsigned char* keep) noexcept nogil:
        """The restricted lattice of the candidates where ``keep`` into ``sub`` (the fields of
        ``restrict_candidates``), ``idx`` and ``pk``.  Returns -1, or (as ``candidate_fields``
        refuses them) the index among the kept candidates of the first with a puncteme id of
        ``n_pm`` or more, and then restricts nothing."""
        cdef const int* cand_ptr = self.full[0]
        cdef int* ptr = self.sub[0]
        cdef long w, k, kept = 0, Km = max(self.K, 1)
        for w in range(self.n):
            for k in range(cand_ptr[w], cand_ptr[w + 1]):
                if keep[k]:
                    if self.cand_l[k] < 0 or self.cand_l[k] >= self.n_pm or self.cand_r[k] < 0 \
                            or self.cand_r[k] >= self.n_pm:
                        return kept
                    kept += 1
        kept = 0
        ptr[0] = 0
        for w in range(self.n):
            for k in range(cand_ptr[w], cand_ptr[w + 1]):
                if keep[k]:
                    self.idx[kept] = k
                    self.pk[kept] = p[k]
                    self.col[kept] = self.cand_l[k]
                    self.col[Km + kept] = self.cand_r[k]
                    kept += 1
            ptr[w + 1] = <int>kept
        _both_sides_unique(self.n, self.n_pm, self.col, self.col + Km, ptr, self.stamp, self.rank, self.sub[3],
                           self.sub[4], self.sub[1], self.sub[5], self.sub[6], self.sub[2])
        return -1

    cdef void restrict_checked(self, const double* p, const unsigned char* keep) except *:
        """:meth:`restrict`, E158 for a puncteme id out of range."""
        cdef long bad = self.restrict(p, keep)
        if bad >= 0:
            raise ValueError(Errors.E158.format(k=bad, last=self.n_pm - 1))

    cdef double max_pass(self, bint restricted, const double* p, long* best) noexcept:
        """``dp._viterbi_checked`` of the restricted lattice (weights ``pk``) or of the whole one
        (weights ``p``): the best derivation's log-probability and, per node, its first candidate
        of greatest max-marginal, an index into that lattice (all -1 when there is none)."""
        cdef _Workspace ws = self.ws
        cdef const int* f[7]
        cdef const double* P = p
        cdef Pass ps
        cdef double logmax, unused = 0.0
        cdef long K = self.K, w, tot, ss
        cdef int i
        for i in range(7):
            if restricted:
                f[i] = self.sub[i]
            else:
                f[i] = self.full[i]
        if restricted:
            P = self.pk
            K = self.sub[0][self.n]
        ws.set_candidates(f[0], f[1], f[2], f[3], f[4], f[5], f[6])
        tot = max(ws.total, 1)
        ss = ws.scratch_size()
        cdef double* buf = self.mem
        cdef double* scratch = buf + tot
        cdef double* mu = scratch + ss
        memset(self.mem, 0, (tot + ss + max(K, 1)) * sizeof(double))
        _start(&ps, ws, MAX_PRODUCT, buf, P, mu, &unused, scratch)
        with nogil:
            logmax = _inside(&ps, buf)
            if logmax > -INFINITY:
                _down_sentence(&ps, buf)
            if logmax == -INFINITY:
                for w in range(self.n):
                    best[w] = -1
            else:
                _node_argmax(mu, f[0], self.n, best)
        return logmax


cdef tuple _plain(_Bounded bd, const double* p, best_arr, long passes):
    """:func:`viterbi_bounded`'s pass over the whole lattice, after ``passes`` restricted ones."""
    cdef long[::1] best = best_arr
    cdef double logmax = bd.max_pass(False, p, &best[0])
    return logmax, best_arr, passes


def viterbi_bounded(lat, grammar, p_arr, double[:, :, ::1] phi, bint r2l, long n_pm, double share,
                    double margin):
    """``dp.viterbi_bounded`` of checked input (a lattice in which every node has a candidate,
    finite ``p_arr`` >= 0, float64, one per candidate), the same steps in one compiled call, the
    restricted lattices built in place (not as ``dp.Lattice`` objects).  Returns
    ``(log-probability, best candidate per node, restricted passes run)``."""
    cdef const double[::1] p = p_arr
    cdef const int[::1] ptr = np.ascontiguousarray(lat.cand_ptr, dtype=np.int32)
    cdef const int[::1] node = np.ascontiguousarray(lat.cand_node, dtype=np.int32)
    cdef long n = lat.n, K = p.shape[0], w, k
    cdef bint all_first = True, extra = False, all_keep = True
    cdef double S, lim, low, logbest
    cdef _Bounded bd = _Bounded()
    bd.setup(lat, grammar, phi, r2l, n_pm)
    best_arr = np.empty(n, dtype=np.int64)
    cdef long[::1] best = best_arr
    top_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] top = top_arr
    for w in range(n):
        top[w] = p[ptr[w]]
        for k in range(ptr[w] + 1, ptr[w + 1]):
            if p[k] > top[w]:
                top[w] = p[k]
        if not top[w] > 0:  # a node without a possible candidate: p(x|T) = 0
            return _plain(bd, &p[0], best_arr, 0)
    first_arr = np.empty(K, dtype=np.uint8)
    cdef unsigned char[::1] first = first_arr
    for k in range(K):
        first[k] = p[k] >= share * top[node[k]]
        if not first[k]:
            all_first = False
    if all_first:
        return _plain(bd, &p[0], best_arr, 0)
    bd.restrict_checked(&p[0], &first[0])
    low = bd.max_pass(True, &p[0], &best[0])
    if not low > -INFINITY:
        return _plain(bd, &p[0], best_arr, 1)
    # U(c) = p(c) · Π_{v≠w} max p(v) in log space, as NumPy computes it (its log and its sum)
    log_top = np.log(top_arr)
    S = log_top.sum()
    cdef const double[::1] lt = log_top
    if (p_arr > 0).all():
        logp_arr = np.log(p_arr)
    else:
        with np.errstate(divide="ignore"):
            logp_arr = np.log(p_arr)
    cdef const double[::1] logp = logp_arr
    keep_arr = np.empty(K, dtype=np.uint8)
    cdef unsigned char[::1] keep = keep_arr
    lim = low - margin
    for k in range(K):
        keep[k] = logp[k] + (S - lt[node[k]]) >= lim
        if keep[k] and not first[k]:
            extra = True
        if not keep[k]:
            all_keep = False
    if not extra:  # the first pass held every candidate that can win
        for w in range(n):
            best[w] = bd.idx[best[w]]
        return low, best_arr, 1
    if all_keep:
        return _plain(bd, &p[0], best_arr, 1)
    bd.restrict_checked(&p[0], &keep[0])
    logbest = bd.max_pass(True, &p[0], &best[0])
    if not logbest > -INFINITY:  # cannot happen (the kept lattice holds a derivation): be plain
        return _plain(bd, &p[0], best_arr, 2)
    for w in range(n):
        best[w] = bd.idx[best[w]]
    return logbest, best_arr, 2

