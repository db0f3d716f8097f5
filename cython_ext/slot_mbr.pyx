# distutils: language = c++
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Per-slot MBR restoration from exact slot marginals, compiled (docs/decoding.md, "The marginal
decoder").

For every slot of every sentence of a batch, in one call and without Python per slot, what the
``"exact"`` decoder of ``spacy_punctgen/decode/mbr.py`` computes slot by slot in NumPy: the slot
marginal ``p(x_i | T)`` with the same pruning, then the per-slot MBR choice.

* A slot's underlying string is the concatenation of independent node halves (``slot_parts``),
  so the channel reads the halves one at a time, each a mixture over that half's puncteme
  marginal (the half's side of ATTACH's pair probabilities, summed per puncteme).  A *state* is
  (pending symbol or -1, surface written so far), the surface a 64-bit code: short surfaces are
  their own code, longer ones go through a prefix trie kept per output slot (so the trees of a
  mixture share it).  Surfaces are told apart exactly.
* Reading one puncteme of a half (``_read``): the states whose product with the puncteme's
  probability reaches ``prune`` (in a slot of more than ``wide`` halves, only the ``expand``
  largest products of the half are read; where no product of a half reaches ``prune``, the
  largest alone), then the channel over the puncteme symbol by symbol (reversed for R2L; one edit
  per bigram, equal states merged by sum in the order they arise), and the resulting states that
  reach ``prune`` are added into the half's result (where none does in the whole half, the best
  of them alone is kept).
* After each half at most ``beam`` states are kept (the most probable; ties: first arisen); if
  their mass is below ``rescale`` they are scaled back to 1 and the scale remembered, so that
  ``prune`` stays relative in deep slots (probabilities are reported unscaled).
* The final states give the surface strings (the pending symbol written last; R2L reversed);
  slot 0 reads ``^`` first (L2R) or last (R2L) and strips it.
* Several trees of a sentence: ``(1/K) Σ_k p(x_i | T_k)``, the trees in order, on a common scale.
* MBR: the strings ranked by (probability descending, string ascending); the first ``n_cand`` are
  the candidates, the first ``beam`` of (scaled) probability at least ``support_min`` the support
  (else the first string); the choice is the candidate of least ``Σ_s p(s)·d(c, s)`` (Levenshtein
  distance over tokens; ties: the earlier candidate), the empty string's ``p(s)`` times
  ``empty_weight`` (1: the expected edit distance; below 1, a missed mark costs more than a
  spurious one, for F1 rather than edit distance).
* Class factors (a product of experts, ``spacy_punctgen/decode/lexical.py``): a group whose
  ``g_apply`` is set multiplies, after the ranking, each string's probability by its row of
  ``g_factor`` at the string's class (the class of the string's symbol of least ``sym_rank``,
  ``sym_class`` of it; a string without symbols: ``empty_class``), scales the products back to the
  marginal's mass (``Σp / Σp·f``; where ``Σp·f`` is not positive the marginal is kept), and ranks
  them again by that probability, equals in their old order; support, candidates, MBR and the
  reported probability are then those of the product (with ``marginals``: the product itself).

The mathematics is mbr's; floating-point sums are taken in another order, so probabilities agree
to about 1e-15 (relative) and choices are equal unless two candidates' risks tie to that precision.

Inputs are flat arrays (built and checked by ``spacy_punctgen/decode/exact.py``): output slot
(*group*) ``g`` mixes the units ``g_unit[g_ptr[g]:g_ptr[g+1]]`` (one per tree); unit ``u`` reads
the node halves ``part_half[u_ptr[u]:u_ptr[u+1]]`` in ``slot_parts`` order, half
``h = 2·node + side`` (side 0: left, 1: right); node ``w`` has the candidate pairs
``pairs[node_ptr[w]:node_ptr[w+1]]`` (puncteme ids) with probabilities ``pair_p``; ``u_slot0[u]``:
the unit is a slot 0; sentence ``k`` has the groups ``s_ptr[k]:s_ptr[k+1]``.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.math cimport INFINITY, isfinite, log, exp
from libc.stdlib cimport free, realloc
from libc.string cimport memset
from libcpp.vector cimport vector
from libcpp.utility cimport pair
from libcpp.algorithm cimport sort, nth_element
from libcpp.functional cimport greater
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

import numpy as np

from spacy_punctgen.errors import Errors

cdef enum:
    KEEP = 0
    ABSORB_LEFT = 1
    ABSORB_RIGHT = 2
    TRANSPOSE = 3

cdef enum:
    OK = 0
    NOT_BOS = 1       # a slot-0 string does not start with '^'
    EMPTY = 2         # no surface string (a half without a puncteme of positive probability)
    NO_MEMORY = 3

cdef extern from *:
    """
    #define SLOT_MBR_GOLDEN 0x9E3779B97F4A7C15ULL
    """
    uint64_t GOLDEN "SLOT_MBR_GOLDEN"
cdef uint64_t LOW32 = <uint64_t>0xFFFFFFFFULL
cdef int32_t INT32_BIG = 0x7FFFFFFF


# ----------------------------------------------------------------------------- tables
cdef struct Slot:
    uint64_t key
    int32_t entry     # index into keys/vals
    uint32_t gen      # the slot is in use iff gen == the table's gen


cdef struct Table:
    # Keys (uint64) in insertion order, each with a double; open addressing (linear probing,
    # keys in the slots) from key to entry.  _add merges equal keys by sum, like a dict's
    # d[k] = d.get(k, 0.0) + p.  _clear is O(1): a new generation of slots, and a window of
    # them sized for about `hint` keys (few keys stay in few cache lines).  Reserve room first
    # (_reserve); the adds themselves never allocate.
    Slot* slots
    size_t alloc      # slots allocated; slots[0 : 1 << lg] are the window in use
    int lg
    int shift         # 64 - lg
    uint64_t mask     # (1 << lg) - 1
    uint32_t gen
    uint64_t* keys
    double* vals
    int n
    int cap
    bint failed       # an allocation failed: the table's contents are void


cdef void _t_init(Table* t) noexcept nogil:
    t.slots = NULL
    t.alloc = 0
    t.lg = 6
    t.shift = 58
    t.mask = 63
    t.gen = 1
    t.keys = NULL
    t.vals = NULL
    t.n = 0
    t.cap = 0
    t.failed = False


cdef void _t_free(Table* t) noexcept nogil:
    free(t.slots)
    free(t.keys)
    free(t.vals)
    _t_init(t)


cdef bint _t_window(Table* t, int lg) noexcept nogil:
    """The window is ``1 << lg`` slots (allocated, new ones unused)."""
    cdef size_t want = <size_t>1 << lg
    cdef Slot* mem
    if want > t.alloc:
        mem = <Slot*>realloc(t.slots, want * sizeof(Slot))
        if mem == NULL:
            t.failed = True
            return False
        memset(mem + t.alloc, 0, (want - t.alloc) * sizeof(Slot))  # gen 0: never in use
        t.slots = mem
        t.alloc = want
    t.lg = lg
    t.shift = 64 - lg
    t.mask = want - 1
    return True


cdef void _t_next_gen(Table* t) noexcept nogil:
    cdef size_t j
    t.gen += 1
    if t.gen == 0:  # wrapped: forget every slot
        for j in range(t.alloc):
            t.slots[j].gen = 0
        t.gen = 1


cdef inline void _t_clear(Table* t, size_t hint) noexcept nogil:
    cdef int lg = 6
    t.n = 0
    _t_next_gen(t)
    while (<size_t>1 << lg) < 2 * hint + 2:
        lg += 1
    _t_window(t, lg)


cdef inline int _t_slot(Table* t, uint64_t key) noexcept nogil:
    """The slot of ``key``, or the free slot where it goes."""
    cdef uint64_t h = (key * GOLDEN) >> t.shift
    cdef Slot* sl
    while True:
        sl = &t.slots[h]
        if sl.gen != t.gen or sl.key == key:
            return <int>h
        h = (h + 1) & t.mask


cdef inline bint _t_reserve(Table* t, int extra) noexcept nogil:
    """Room for ``extra`` more keys (see :func:`_t_grow`)."""
    if t.n + extra <= t.cap and 2 * (<size_t>(t.n + extra) + 1) <= (<size_t>1 << t.lg):
        return True
    return _t_grow(t, extra)


cdef bint _t_grow(Table* t, int extra) noexcept nogil:
    """Room for ``extra`` more keys: entries, and a window at most half full."""
    cdef int need = t.n + extra, cap, lg, j
    cdef uint64_t* k
    cdef double* v
    cdef Slot* sl
    if need > t.cap:
        cap = need if need > 2 * t.cap else 2 * t.cap
        if cap < 64:
            cap = 64
        k = <uint64_t*>realloc(t.keys, <size_t>cap * sizeof(uint64_t))
        if k == NULL:
            t.failed = True
            return False
        t.keys = k
        v = <double*>realloc(t.vals, <size_t>cap * sizeof(double))
        if v == NULL:
            t.failed = True
            return False
        t.vals = v
        t.cap = cap
    if 2 * (<size_t>need + 1) > (<size_t>1 << t.lg):
        lg = t.lg
        while 2 * (<size_t>need + 1) > (<size_t>1 << lg):
            lg += 1
        if not _t_window(t, lg):
            return False
        _t_next_gen(t)
        for j in range(t.n):  # re-insert into the larger window
            sl = &t.slots[_t_slot(t, t.keys[j])]
            sl.key = t.keys[j]
            sl.entry = j
            sl.gen = t.gen
    return True


cdef inline int _t_add(Table* t, uint64_t key, double p) noexcept nogil:
    """``d[key] = d.get(key, 0.0) + p`` (room reserved); returns the entry."""
    cdef Slot* sl = &t.slots[_t_slot(t, key)]
    if sl.gen != t.gen:
        sl.key = key
        sl.entry = t.n
        sl.gen = t.gen
        t.keys[t.n] = key
        t.vals[t.n] = p
        t.n += 1
        return sl.entry
    t.vals[sl.entry] = t.vals[sl.entry] + p
    return sl.entry


# ----------------------------------------------------------------------------- the work
cdef cppclass Work:
    Table trie
    Table t1
    Table t2
    Table t3
    Table t4
    Table fin
    Table mix
    vector[pair[double, int]] order
    vector[int32_t] buf           # surface strings of the marginal's entries, flat
    vector[int32_t] soff          # entry j: buf[soff[j]:soff[j + 1]]
    vector[int32_t] rev
    vector[int] ranked
    vector[int] sup
    vector[int] row
    vector[int32_t] out_sym
    vector[int64_t] out_ptr
    vector[double] out_prob
    vector[int64_t] g_out         # group g: entries g_out[g]:g_out[g + 1]
    vector[uint64_t] m_keys       # a mixture's trees' marginals, one after the other
    vector[double] m_vals
    vector[int] m_off
    vector[double] m_ls
    vector[double] sp             # the states' probabilities, descending ...
    vector[int] si                # ... and their entries
    vector[int] pick
    vector[double] prods
    Table tt1                     # scratch for _transitions
    Table tt2
    vector[int32_t] tr_off        # [(a + 1) * (B + 1) + k] -> its first transition (-1: not made yet)
    vector[int32_t] tr_cnt
    vector[int32_t] tr_pend       # a transition: the pending symbol afterwards, the written symbols
    vector[uint64_t] tr_w         # (a short code) and how many, the surfaces they extend inline
    vector[int32_t] tr_wlen       # (those below tr_fit), the probability
    vector[uint64_t] tr_fit
    vector[double] tr_q
    int B                         # punctemes (k = B: the '^' read at the end of an R2L slot 0)
    int64_t expand                # at most this many (state, puncteme) products per half (0: all) ...
    int64_t wide                  # ... of a slot of more than this many halves
    bint wide_unit
    double rescale                # states of less total mass are scaled back to 1 (0: never)
    double tau                    # this half's least product (when `expand` cuts), ...
    int64_t tau_ties              # ... and how many products equal to it may still be read
    bint cut                      # `expand` cuts this half
    bint only_best                # no product of this half reaches prune: the largest is read
    double best_v                 # the best read result dropped by prune in this half, and its state
    uint64_t best_key
    bint best_any
    double log_scale              # this unit's scale (log): its probabilities are scaled by exp(-it)
    vector[double] acc            # a node half's puncteme marginal (dense, kept at 0 between halves)
    vector[int32_t] touched
    vector[int32_t] h_pm          # ... and sparse: increasing puncteme ids, probability > 0
    vector[double] h_p
    vector[int] h_c               # ... and how many states times each reach prune (_plan)
    # the problem
    const int64_t* u_ptr
    const uint8_t* u_slot0
    const int64_t* part_half
    const int64_t* node_ptr
    const int64_t* pairs
    const double* pair_p
    const int64_t* pm_ptr
    const int32_t* pm_sym
    const double* phi_t           # phi transposed: [b, a, edit] (a read of b stays in one block)
    vector[double] phi_store
    int S
    int32_t bos
    bint short_codes
    bint r2l
    double prune
    int beam
    int n_cand
    double support_min
    double empty_weight   # the empty string's weight in the risk (1: expected edit distance)
    const double* g_weight  # per g_unit entry: its tree's weight in the group's mixture (NULL: 1/K each)
    const double* g_factor  # per group: n_class class factors (NULL: none) ...
    const uint8_t* g_apply  # ... and whether they apply to it
    const int32_t* sym_rank # per symbol: its rank, and the class of a string whose least-ranked
    const int32_t* sym_class  # symbol it is (the first of equals)
    int32_t empty_class     # the class of a string without symbols
    int n_class
    vector[double] lw       # _product's scratch: the ranked strings' p·f, their new order
    vector[pair[double, int]] lorder
    vector[int] lranked

    __init__():
        this.g_weight = NULL
        this.g_factor = NULL
        this.g_apply = NULL
        _t_init(&this.tt1)
        _t_init(&this.tt2)
        _t_init(&this.trie)
        _t_init(&this.t1)
        _t_init(&this.t2)
        _t_init(&this.t3)
        _t_init(&this.t4)
        _t_init(&this.fin)
        _t_init(&this.mix)

    __dealloc__():
        _t_free(&this.tt1)
        _t_free(&this.tt2)
        _t_free(&this.trie)
        _t_free(&this.t1)
        _t_free(&this.t2)
        _t_free(&this.t3)
        _t_free(&this.t4)
        _t_free(&this.fin)
        _t_free(&this.mix)

    bint failed() noexcept nogil:
        return (this.tt1.failed or this.tt2.failed or this.trie.failed or this.t1.failed or this.t2.failed or this.t3.failed
                or this.t4.failed or this.fin.failed or this.mix.failed)


# Surfaces and states as 64-bit keys.  With at most 255 symbols (short codes) a surface of up to
# 6 symbols is its own code, the bytes (symbol + 1) from the most significant on (0: the empty
# surface), so most children need no table; a longer one is ``INLINE_TRIE | e``, entry ``e`` of the
# trie (key: parent << 8 | symbol); a state is (pending + 1) << 56 | surface.  Otherwise every
# surface but the empty one (0) is trie entry ``e`` as ``e + 1`` (key: parent << 32 | symbol), and
# a state is (pending + 1) << 32 | surface.
cdef uint64_t INLINE_MAX = <uint64_t>1 << 40     # a surface below this takes one more symbol inline
cdef uint64_t INLINE_TRIE = <uint64_t>1 << 48
cdef uint64_t LOW56 = (<uint64_t>1 << 56) - 1


cdef uint64_t _trie_child(Work* W, uint64_t key) noexcept nogil:
    if not _t_reserve(&W.trie, 1):
        return 0
    return <uint64_t>_t_add(&W.trie, key, 0.0)


cdef inline uint64_t _child(Work* W, uint64_t node, int sym) noexcept nogil:
    """The surface of ``node`` followed by ``sym``."""
    if W.short_codes:
        if node < INLINE_MAX:
            return (node << 8) | <uint64_t>(sym + 1)
        return INLINE_TRIE | _trie_child(W, (node << 8) | <uint64_t>sym)
    return _trie_child(W, (node << 32) | <uint64_t>sym) + 1


cdef inline uint64_t _state(Work* W, int pending, uint64_t node) noexcept nogil:
    if W.short_codes:
        return (<uint64_t>(pending + 1) << 56) | node
    return (<uint64_t>(pending + 1) << 32) | node


cdef inline int _pending(Work* W, uint64_t key) noexcept nogil:
    return <int>(key >> (56 if W.short_codes else 32)) - 1


cdef inline uint64_t _surface_of(Work* W, uint64_t key) noexcept nogil:
    return key & (LOW56 if W.short_codes else LOW32)


cdef void _spell(Work* W, uint64_t node) noexcept nogil:
    """``W.rev``: the symbols of surface ``node``, last first."""
    cdef uint64_t key
    W.rev.clear()
    if W.short_codes:
        while node >= INLINE_TRIE:
            key = W.trie.keys[node - INLINE_TRIE]
            W.rev.push_back(<int32_t>(key & 0xFF))
            node = key >> 8
        while node != 0:
            W.rev.push_back(<int32_t>(node & 0xFF) - 1)
            node >>= 8
    else:
        while node != 0:
            key = W.trie.keys[node - 1]
            W.rev.push_back(<int32_t>(key & LOW32))
            node = key >> 32


cdef inline void _emit_short(Work* W, uint64_t key, double p, int b, Table* out) noexcept nogil:
    """:func:`_emit` with short codes (the same states, spelled out)."""
    cdef int a = <int>(key >> 56) - 1
    cdef uint64_t node = key & LOW56
    cdef uint64_t kb = <uint64_t>(b + 1) << 56
    cdef uint64_t ka
    cdef const double* e
    cdef double q
    if a < 0:
        _t_add(out, kb | node, p)
        return
    ka = key & ~LOW56
    e = W.phi_t + (<int64_t>b * W.S + a) * 4  # phi[a, b, :]
    q = e[KEEP]
    if q > 0.0:
        if node < INLINE_MAX:
            _t_add(out, kb | (node << 8) | <uint64_t>(a + 1), p * q)
        else:
            _t_add(out, kb | _child(W, node, a), p * q)
    q = e[ABSORB_LEFT]
    if q > 0.0:
        _t_add(out, key, p * q)
    q = e[ABSORB_RIGHT]
    if q > 0.0:
        _t_add(out, kb | node, p * q)
    q = e[TRANSPOSE]
    if q > 0.0:
        if node < INLINE_MAX:
            _t_add(out, ka | (node << 8) | <uint64_t>(b + 1), p * q)
        else:
            _t_add(out, ka | _child(W, node, b), p * q)


cdef inline void _emit(Work* W, uint64_t key, double p, int b, Table* out) noexcept nogil:
    """``channel_step`` from one state: read ``b`` (one edit per bigram, in the order keep,
    absorb-left, absorb-right, transpose); equal states merge by sum.  Room for 4 reserved."""
    cdef int a = _pending(W, key)
    cdef uint64_t node = _surface_of(W, key)
    cdef const double* e
    cdef double q
    if a < 0:
        _t_add(out, _state(W, b, node), p)
        return
    e = W.phi_t + (<int64_t>b * W.S + a) * 4  # phi[a, b, :]
    q = e[KEEP]
    if q > 0.0:
        _t_add(out, _state(W, b, _child(W, node, a)), p * q)
    q = e[ABSORB_LEFT]
    if q > 0.0:
        _t_add(out, _state(W, a, node), p * q)
    q = e[ABSORB_RIGHT]
    if q > 0.0:
        _t_add(out, _state(W, b, node), p * q)
    q = e[TRANSPOSE]
    if q > 0.0:
        _t_add(out, _state(W, a, _child(W, node, b)), p * q)


cdef inline int _seq(Work* W, int k, const int32_t** seq) noexcept nogil:
    """Puncteme ``k``'s symbols (``k == B``: ``^``); returns their number."""
    if k == W.B:
        seq[0] = &W.bos
        return 1
    seq[0] = W.pm_sym + W.pm_ptr[k]
    return <int>(W.pm_ptr[k + 1] - W.pm_ptr[k])


cdef int _transitions(Work* W, int a, int k) noexcept nogil:
    """What reading puncteme ``k`` (reversed for R2L) does to state ``(a, ())``: the states it
    ends in, each (pending, written symbols, probability), paths merged as ``channel_step``
    merges them; made on first use (short codes and punctemes of at most 6 symbols).  Returns
    the index into ``tr_off``/``tr_cnt``."""
    cdef int idx = (a + 1) * (W.B + 1) + k, m, t, j, wl
    cdef const int32_t* seq
    cdef Table* src = &W.tt1
    cdef Table* dst = &W.tt2
    cdef Table* tmp
    cdef uint64_t w
    if W.tr_off[idx] >= 0:
        return idx
    m = _seq(W, k, &seq)
    _t_clear(src, 1)
    if not _t_reserve(src, 1):
        return idx
    _t_add(src, _state(W, a, 0), 1.0)
    for t in range(m):
        _t_clear(dst, 4 * <size_t>src.n)
        if not _t_reserve(dst, 4 * src.n):
            return idx
        for j in range(src.n):
            _emit_short(W, src.keys[j], src.vals[j], seq[m - 1 - t if (W.r2l and k < W.B) else t], dst)
        tmp = src
        src = dst
        dst = tmp
    W.tr_off[idx] = <int32_t>W.tr_q.size()
    W.tr_cnt[idx] = src.n
    for j in range(src.n):
        w = src.keys[j] & LOW56
        wl = 0
        while (w >> (8 * wl)) != 0:
            wl += 1
        W.tr_pend.push_back(<int32_t>(src.keys[j] >> 56) - 1)
        W.tr_w.push_back(w)
        W.tr_wlen.push_back(wl)
        W.tr_fit.push_back(<uint64_t>1 << (8 * (6 - wl)))
        W.tr_q.push_back(src.vals[j])
    return idx


cdef int _survivors(Work* W, Table* states, double weight, int c) noexcept nogil:
    """``W.pick``: the states whose product with ``weight`` is read (at least ``prune``; where
    ``expand`` cuts this half, above ``tau`` or equal to it while ties remain), in their order.
    ``c``: how many products reach ``prune`` (:func:`_plan`: the survivors are a prefix of the
    states sorted by _rank, as p * weight is monotone in p)."""
    cdef int j, n = states.n, lo, hi, mid, ties
    cdef double v
    if c == 1 and not W.only_best and not W.cut:  # the most probable state alone
        W.pick.resize(1)
        W.pick[0] = W.si[0]
        return 1
    if W.only_best:  # nothing reaches prune in this half: the largest product alone
        W.pick.clear()
        if W.tau_ties > 0 and n > 0 and W.sp[0] * weight == W.tau:
            W.tau_ties = 0
            W.pick.push_back(W.si[0])
            return 1
        return 0
    if W.cut:
        lo = 0
        hi = c
        while lo < hi:
            mid = (lo + hi) >> 1
            if W.sp[mid] * weight > W.tau:
                lo = mid + 1
            else:
                hi = mid
        ties = 0
        while lo + ties < c and W.sp[lo + ties] * weight == W.tau and ties < W.tau_ties:
            ties += 1
        W.tau_ties -= ties
        c = lo + ties
    if c == 0:
        W.pick.clear()
        return 0
    if c * 8 < n or W.cut:  # few (or cut): the survivors, back in the states' order
        W.pick.assign(W.si.begin(), W.si.begin() + c)
        sort(W.pick.begin(), W.pick.end())
    else:  # (the survivors are exactly the c states at least prune / weight)
        W.pick.resize(c)
        mid = 0
        for j in range(n):
            if states.vals[j] * weight >= W.prune and mid < c:
                W.pick[mid] = j
                mid += 1
    return c


cdef void _read(Work* W, Table* states, int k, double weight, int c0, Table* into) noexcept nogil:
    """mbr's read of one puncteme of a half: the states times ``weight`` (see _survivors), the
    channel over the puncteme (reversed for R2L), equal states merged by sum, the results at
    least ``prune`` added into ``into`` (the best of the others remembered in ``best_*``)."""
    cdef int j, t, c, b, m, x, idx, wl
    cdef const int32_t* seq
    cdef double v, q
    cdef uint64_t node, nn, w, key
    cdef Table* src
    cdef Table* dst
    cdef Table* tmp
    c = _survivors(W, states, weight, c0)
    if c == 0:
        return
    m = _seq(W, k, &seq)
    if c == 1 and m >= 1 and m <= 6 and W.short_codes:
        # one state read (the usual case): nothing to merge with, so the puncteme's transitions
        # from its pending symbol (paths already merged) go straight into `into`
        j = W.pick[0]
        v = states.vals[j] * weight
        node = states.keys[j] & LOW56
        idx = _transitions(W, <int>(states.keys[j] >> 56) - 1, k)
        if not _t_reserve(into, W.tr_cnt[idx]):
            return
        for x in range(W.tr_off[idx], W.tr_off[idx] + W.tr_cnt[idx]):
            q = v * W.tr_q[x]
            wl = W.tr_wlen[x]
            if node < W.tr_fit[x]:
                nn = (node << (8 * wl)) | W.tr_w[x]
            else:  # the surface outgrows short codes: symbol by symbol, through the trie
                nn = node
                w = W.tr_w[x]
                while wl > 0:
                    wl -= 1
                    nn = _child(W, nn, <int>((w >> (8 * wl)) & 0xFF) - 1)
            key = (<uint64_t>(W.tr_pend[x] + 1) << 56) | nn
            if q >= W.prune:
                _t_add(into, key, q)
            elif q > W.best_v or not W.best_any:
                W.best_v = q
                W.best_key = key
                W.best_any = True
        return
    if m == 0:
        if not _t_reserve(into, c):
            return
        for t in range(c):
            j = W.pick[t]
            _t_add(into, states.keys[j], states.vals[j] * weight)
        return
    src = &W.t3
    dst = &W.t4
    _t_clear(src, 2 * <size_t>c)
    if not _t_reserve(src, 4 * c):
        return
    b = seq[m - 1 if (W.r2l and k < W.B) else 0]
    if W.short_codes:
        for t in range(c):
            j = W.pick[t]
            _emit_short(W, states.keys[j], states.vals[j] * weight, b, src)
    else:
        for t in range(c):
            j = W.pick[t]
            _emit(W, states.keys[j], states.vals[j] * weight, b, src)
    for t in range(1, m):
        _t_clear(dst, 2 * <size_t>src.n)
        if not _t_reserve(dst, 4 * src.n):
            return
        b = seq[m - 1 - t if (W.r2l and k < W.B) else t]
        if W.short_codes:
            for j in range(src.n):
                _emit_short(W, src.keys[j], src.vals[j], b, dst)
        else:
            for j in range(src.n):
                _emit(W, src.keys[j], src.vals[j], b, dst)
        tmp = src
        src = dst
        dst = tmp
    c = 0
    for j in range(src.n):
        if src.vals[j] >= W.prune:
            c += 1
        elif src.vals[j] > W.best_v or not W.best_any:
            W.best_v = src.vals[j]
            W.best_key = src.keys[j]
            W.best_any = True
    if not _t_reserve(into, c):
        return
    for j in range(src.n):
        if src.vals[j] >= W.prune:
            _t_add(into, src.keys[j], src.vals[j])


cdef void _beam(Work* W, Table* nxt, Table* states) noexcept nogil:
    """``states`` = the ``beam`` most probable entries of ``nxt`` (ties: first arisen), in that
    order (mbr: ``dict(sorted(nxt.items(), key=-p)[:beam])``)."""
    cdef int j, n = nxt.n
    W.order.resize(n)
    for j in range(n):
        W.order[j] = pair[double, int](-nxt.vals[j], j)
    # the first `beam` of the strict order (-p, position): select, then sort them
    nth_element(W.order.begin(), W.order.begin() + (W.beam - 1), W.order.end())
    sort(W.order.begin(), W.order.begin() + W.beam)
    _t_clear(states, <size_t>W.beam)
    if not _t_reserve(states, W.beam):
        return
    for j in range(W.beam):
        _t_add(states, nxt.keys[W.order[j].second], nxt.vals[W.order[j].second])


cdef void _rank(Work* W, Table* states) noexcept nogil:
    """``sp``/``si``: the states' probabilities in descending order (ties: by entry), and their
    entries.  States that are in that order already (as :func:`_beam` leaves them) are not
    sorted."""
    cdef int j, n = states.n
    cdef const double* v = states.vals
    W.sp.resize(n)
    W.si.resize(n)
    j = 1
    while j < n and v[j] <= v[j - 1]:
        j += 1
    if j >= n:
        for j in range(n):
            W.sp[j] = v[j]
            W.si[j] = j
        return
    W.order.resize(n)
    for j in range(n):
        W.order[j] = pair[double, int](-v[j], j)
    sort(W.order.begin(), W.order.end())
    for j in range(n):
        W.sp[j] = -W.order[j].first
        W.si[j] = W.order[j].second


cdef void _half(Work* W, int64_t h) noexcept nogil:
    """Half ``h = 2·node + side``'s puncteme marginal: mbr's ``np.bincount(pairs[:, side],
    weights=probs)`` (the same sums, in pair order), kept where > 0, by increasing puncteme id."""
    cdef int64_t node = h >> 1, side = h & 1, e
    cdef int32_t pm
    cdef int t
    W.touched.clear()
    for e in range(W.node_ptr[node], W.node_ptr[node + 1]):
        pm = <int32_t>W.pairs[2 * e + side]
        if W.acc[pm] == 0.0:
            W.touched.push_back(pm)
        W.acc[pm] = W.acc[pm] + W.pair_p[e]
    sort(W.touched.begin(), W.touched.end())
    W.h_pm.clear()
    W.h_p.clear()
    for t in range(<int>W.touched.size()):
        pm = W.touched[t]
        if t > 0 and pm == W.touched[t - 1]:
            continue
        if W.acc[pm] > 0.0:
            W.h_pm.push_back(pm)
            W.h_p.push_back(W.acc[pm])
        W.acc[pm] = 0.0


cdef void _plan(Work* W, Table* states, const int32_t* ks, const double* ws, int n_k) noexcept nogil:
    """Before a half's reads (punctemes ``ks``, weights ``ws``): where more than ``expand``
    (state, puncteme) products reach ``prune``, only the ``expand`` largest are read (``tau``);
    where none does, the largest alone is."""
    cdef int e, t, lo, hi, mid, n = states.n
    cdef int64_t total = 0
    cdef double v, best = -1.0
    W.cut = False
    W.only_best = False
    W.best_any = False
    W.h_c.resize(n_k)
    for e in range(n_k):
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if W.sp[mid] * ws[e] >= W.prune:
                lo = mid + 1
            else:
                hi = mid
        W.h_c[e] = lo
        total += lo
    if total == 0 and n > 0 and n_k > 0:  # nothing reaches prune: read the largest product only
        for e in range(n_k):
            v = W.sp[0] * ws[e]
            if v > best:
                best = v
        W.only_best = True
        W.tau = best
        W.tau_ties = 1
        return
    if W.expand <= 0 or not W.wide_unit or total <= W.expand:
        return
    W.prods.clear()
    for e in range(n_k):
        for t in range(n):
            v = W.sp[t] * ws[e]
            if v < W.prune:
                break
            W.prods.push_back(v)
    nth_element(W.prods.begin(), W.prods.begin() + (W.expand - 1), W.prods.end(), greater[double]())
    W.tau = W.prods[W.expand - 1]
    W.tau_ties = W.expand
    for t in range(<int>W.prods.size()):
        if W.prods[t] > W.tau:
            W.tau_ties -= 1
    W.cut = True


cdef void _unit(Work* W, int64_t u, Table* fin) noexcept nogil:
    """mbr's ``_slot_marginal`` of one (tree, slot): into ``fin``, keyed by the surface code of the
    whole surface string (written + pending), in the order the final states give them, scaled by
    ``exp(-log_scale)``."""
    cdef int64_t lo = W.u_ptr[u], hi = W.u_ptr[u + 1], t, e
    cdef Table* states = &W.t1
    cdef Table* nxt = &W.t2
    cdef Table* tmp
    cdef bint slot0 = W.u_slot0[u] != 0
    cdef int a, j, n_reads = <int>(hi - lo) + (1 if slot0 and W.r2l else 0)
    cdef uint64_t node
    cdef double total
    W.log_scale = 0.0
    W.wide_unit = hi - lo > W.wide
    _t_clear(states, 0)
    if not _t_reserve(states, 1):
        return
    _t_add(states, _state(W, W.bos if slot0 and not W.r2l else -1, 0), 1.0)
    for t in range(n_reads):
        if t < hi - lo:
            _half(W, W.part_half[hi - 1 - t if W.r2l else lo + t])
        else:  # R2L slot 0: '^' is read last
            W.h_pm.clear()
            W.h_p.clear()
            W.h_pm.push_back(W.B)
            W.h_p.push_back(1.0)
        _rank(W, states)
        _plan(W, states, W.h_pm.data(), W.h_p.data(), <int>W.h_pm.size())
        _t_clear(nxt, 4 * <size_t>states.n)
        for e in range(<int64_t>W.h_pm.size()):
            _read(W, states, W.h_pm[e], W.h_p[e], W.h_c[e], nxt)
        if nxt.n == 0 and W.best_any:  # nothing reached prune: keep the best
            if not _t_reserve(nxt, 1):
                return
            _t_add(nxt, W.best_key, W.best_v)
        if nxt.n > W.beam:
            _beam(W, nxt, states)
        else:
            tmp = states
            states = nxt
            nxt = tmp
        if W.rescale > 0.0:
            total = 0.0
            for j in range(states.n):
                total += states.vals[j]
            if total < W.rescale and total > 0.0:
                for j in range(states.n):
                    states.vals[j] = states.vals[j] / total
                W.log_scale += log(total)
    _t_clear(fin, <size_t>states.n)
    if not _t_reserve(fin, states.n):
        return
    for j in range(states.n):
        a = _pending(W, states.keys[j])
        node = _surface_of(W, states.keys[j])
        if a >= 0:
            node = _child(W, node, a)
        _t_add(fin, node, states.vals[j])


cdef bint _less(Work* W, int i, int j) noexcept nogil:
    """Surface string ``i`` < string ``j`` (Python tuple order)."""
    cdef int32_t a0 = W.soff[i], a1 = W.soff[i + 1], b0 = W.soff[j], b1 = W.soff[j + 1]
    while a0 < a1 and b0 < b1:
        if W.buf[a0] != W.buf[b0]:
            return W.buf[a0] < W.buf[b0]
        a0 += 1
        b0 += 1
    return (a1 - a0) < (b1 - b0)


cdef int _lev(Work* W, int i, int j) noexcept nogil:
    """Levenshtein distance between surface strings ``i`` and ``j`` (unit costs)."""
    cdef const int32_t* x = W.buf.data() + W.soff[i]
    cdef const int32_t* y = W.buf.data() + W.soff[j]
    cdef int la = W.soff[i + 1] - W.soff[i], lb = W.soff[j + 1] - W.soff[j], r, c, diag, up, best
    if la == 0:
        return lb
    if lb == 0:
        return la
    W.row.resize(lb + 1)
    for c in range(lb + 1):
        W.row[c] = c
    for r in range(1, la + 1):
        diag = W.row[0]
        W.row[0] = r
        for c in range(1, lb + 1):
            up = W.row[c]
            best = diag + (0 if x[r - 1] == y[c - 1] else 1)
            if up + 1 < best:
                best = up + 1
            if W.row[c - 1] + 1 < best:
                best = W.row[c - 1] + 1
            W.row[c] = best
            diag = up
    return W.row[lb]


cdef inline int32_t _class_of(const int32_t* sym, int64_t lo, int64_t hi, const int32_t* rank,
                              const int32_t* cls, int32_t empty) noexcept nogil:
    """The class of the string ``sym[lo:hi]``: ``cls`` of its least-ranked symbol (the first of
    equals), ``empty`` where it has none."""
    cdef int32_t c = empty, r, best = INT32_BIG
    cdef int64_t s
    for s in range(lo, hi):
        r = rank[sym[s]]
        if r < best:
            best = r
            c = cls[sym[s]]
    return c


cdef void _product(Work* W, Table* marg, const double* f) noexcept nogil:
    """The product with the class factors ``f``: ``p'_j = p_j·f[class_j]`` scaled back to the
    marginal's mass (``Σp / Σp·f``; where ``Σp·f`` is not positive, ``p`` is kept), written over
    ``marg.vals``, and ``W.ranked`` re-ranked by ``p'`` descending, equals in their old order."""
    cdef int n = marg.n, t, j
    cdef double w, total = 0.0, mass = 0.0, scale
    W.lw.resize(n)
    for t in range(n):  # in ranked order, as the Python reference sums
        j = W.ranked[t]
        w = marg.vals[j] * f[_class_of(W.buf.data(), W.soff[j], W.soff[j + 1], W.sym_rank, W.sym_class,
                                       W.empty_class)]
        W.lw[t] = w
        total += w
        mass += marg.vals[j]
    if not total > 0.0:
        return
    scale = mass / total
    W.lorder.resize(n)
    for t in range(n):
        W.lorder[t] = pair[double, int](-(W.lw[t] * scale), t)
    sort(W.lorder.begin(), W.lorder.end())  # (-p', old rank): a stable order by p'
    W.lranked.resize(n)
    for t in range(n):
        j = W.ranked[W.lorder[t].second]
        W.lranked[t] = j
        marg.vals[j] = -W.lorder[t].first
    W.ranked.swap(W.lranked)


cdef int _group(Work* W, const int64_t* g_ptr, const int64_t* g_unit, int64_t g, bint marginals) noexcept nogil:
    """One output slot: its (mixture) marginal, then the MBR string (or every string with
    ``marginals``), appended to ``out_*``."""
    cdef int64_t t, K = g_ptr[g + 1] - g_ptr[g]
    cdef Table* marg
    cdef int j, n, c, s, m, i0, i1, best, n_sup, n_c
    cdef uint64_t node, key
    cdef bint slot0 = W.u_slot0[g_unit[g_ptr[g]]] != 0
    cdef double r, best_r, ls, f
    _t_clear(&W.trie, 0)
    if K == 1:
        _unit(W, g_unit[g_ptr[g]], &W.fin)
        marg = &W.fin
        ls = W.log_scale
    else:  # mbr's _mixture_marginal: (1/K) sum over the trees, in tree order, on a common scale
        W.m_keys.clear()
        W.m_vals.clear()
        W.m_off.clear()
        W.m_ls.clear()
        for t in range(g_ptr[g], g_ptr[g + 1]):
            _unit(W, g_unit[t], &W.fin)
            W.m_off.push_back(<int>W.m_keys.size())
            W.m_ls.push_back(W.log_scale)
            for j in range(W.fin.n):
                W.m_keys.push_back(W.fin.keys[j])
                W.m_vals.push_back(W.fin.vals[j])
        W.m_off.push_back(<int>W.m_keys.size())
        ls = W.m_ls[0]
        for t in range(K):
            if W.m_ls[t] > ls:
                ls = W.m_ls[t]
        _t_clear(&W.mix, 0)
        if not _t_reserve(&W.mix, <int>W.m_keys.size()):
            return NO_MEMORY
        for t in range(K):
            f = exp(W.m_ls[t] - ls)  # 1.0 unless a tree's slot needed rescaling
            if W.g_weight != NULL:  # the trees' own weights (they sum to 1 in each group)
                f *= W.g_weight[g_ptr[g] + t]
                for j in range(W.m_off[t], W.m_off[t + 1]):
                    _t_add(&W.mix, W.m_keys[j], W.m_vals[j] * f)
                continue
            for j in range(W.m_off[t], W.m_off[t + 1]):
                _t_add(&W.mix, W.m_keys[j], W.m_vals[j] * f / <double>K)
        marg = &W.mix
    if W.failed():
        return NO_MEMORY
    n = marg.n
    if n == 0:
        return EMPTY
    # surface strings: walk the trie up from each entry's node
    W.buf.clear()
    W.soff.clear()
    W.soff.push_back(0)
    for j in range(n):
        _spell(W, marg.keys[j])
        m = <int>W.rev.size()
        if slot0:
            if m == 0 or W.rev[0 if W.r2l else m - 1] != W.bos:
                return NOT_BOS
            if W.r2l:  # the walk gives x itself: drop its first symbol
                for t in range(1, m):
                    W.buf.push_back(W.rev[t])
            else:      # the walk gives x reversed: drop its last
                for i0 in range(m - 2, -1, -1):
                    W.buf.push_back(W.rev[i0])
        elif W.r2l:
            for t in range(m):
                W.buf.push_back(W.rev[t])
        else:
            for t in range(m - 1, -1, -1):
                W.buf.push_back(W.rev[t])
        W.soff.push_back(<int32_t>W.buf.size())
    # ranked by (-p, string)
    W.order.resize(n)
    for j in range(n):
        W.order[j] = pair[double, int](-marg.vals[j], j)
    sort(W.order.begin(), W.order.end())
    W.ranked.resize(n)
    for j in range(n):
        W.ranked[j] = W.order[j].second
    i0 = 0
    while i0 < n:  # equal probabilities: by string (insertion sort; such runs are tiny)
        i1 = i0 + 1
        while i1 < n and W.order[i1].first == W.order[i0].first:
            i1 += 1
        for t in range(i0 + 1, i1):
            c = W.ranked[t]
            s = t - 1
            while s >= i0 and _less(W, c, W.ranked[s]):
                W.ranked[s + 1] = W.ranked[s]
                s -= 1
            W.ranked[s + 1] = c
        i0 = i1
    if W.g_factor != NULL and W.g_apply[g] != 0:  # the product with the group's class factors
        _product(W, marg, W.g_factor + g * W.n_class)
    if marginals:
        for t in range(n):
            j = W.ranked[t]
            for s in range(W.soff[j], W.soff[j + 1]):
                W.out_sym.push_back(W.buf[s])
            W.out_ptr.push_back(<int64_t>W.out_sym.size())
            W.out_prob.push_back(marg.vals[j] * exp(ls))
        return OK
    # support: the first `beam` strings at least `support_min` probable (else the first one)
    W.sup.clear()
    for t in range(n if n < W.beam else W.beam):
        if marg.vals[W.ranked[t]] >= W.support_min:
            W.sup.push_back(W.ranked[t])
    if W.sup.size() == 0:
        W.sup.push_back(W.ranked[0])
    n_sup = <int>W.sup.size()
    n_c = n if n < W.n_cand else W.n_cand
    best = 0
    if n_c > 1:  # the candidate of least risk (ties: the earlier); partial sums only grow
        best_r = INFINITY
        for c in range(n_c):
            i0 = W.ranked[c]
            r = 0.0
            for s in range(n_sup):
                j = W.sup[s]
                if W.soff[j + 1] == W.soff[j]:
                    r += <double>_lev(W, i0, j) * marg.vals[j] * W.empty_weight
                else:
                    r += <double>_lev(W, i0, j) * marg.vals[j]
                if r >= best_r:
                    break
            if r < best_r:
                best_r = r
                best = c
    j = W.ranked[best]
    for s in range(W.soff[j], W.soff[j + 1]):
        W.out_sym.push_back(W.buf[s])
    W.out_ptr.push_back(<int64_t>W.out_sym.size())
    W.out_prob.push_back(marg.vals[j] * exp(ls))
    return OK


# ----------------------------------------------------------------------------- entry point
cdef _bad(str what):
    return ValueError(Errors.E189.format(what=what))


cdef int64_t _check_ptr(const int64_t[::1] ptr, str name, int64_t end, bint nonempty) except -1:
    """``ptr`` starts at 0, never decreases (strictly increases with ``nonempty``), ends at ``end``."""
    cdef Py_ssize_t j
    if ptr.shape[0] < 1 or ptr[0] != 0 or ptr[ptr.shape[0] - 1] != end:
        raise _bad(f"{name} must run from 0 to {end}")
    for j in range(1, ptr.shape[0]):
        if ptr[j] < ptr[j - 1] or (nonempty and ptr[j] == ptr[j - 1]):
            raise _bad(f"{name} must {'increase' if nonempty else 'not decrease'} (at {j})")
    return 0


cdef tuple _surface(const int32_t* sym, int64_t lo, int64_t hi, list names):
    cdef tuple t = PyTuple_New(hi - lo)
    cdef object v
    cdef int64_t j
    for j in range(lo, hi):
        v = names[sym[j]]
        Py_INCREF(v)
        PyTuple_SET_ITEM(t, j - lo, v)
    return t


def surface_classes(const int32_t[::1] sym, const int64_t[::1] ptr, const int32_t[::1] sym_rank,
                    const int32_t[::1] sym_class, int32_t empty_class):
    """The class ``slot_mbr``'s class factors read for each string ``sym[ptr[i]:ptr[i+1]]`` (symbol
    ids), as an int32 array: what the tests compare with ``mark_class``.  Raises ValueError (E189)
    for inconsistent arrays."""
    cdef Py_ssize_t S = sym_rank.shape[0], n = ptr.shape[0] - 1, i
    _check_ptr(ptr, "ptr", sym.shape[0], False)
    if sym_class.shape[0] != S:
        raise _bad(f"sym_rank has {S} entries, sym_class {sym_class.shape[0]}")
    for i in range(sym.shape[0]):
        if not (0 <= sym[i] < S):
            raise _bad(f"symbol {i} is {sym[i]}, outside 0..{S - 1}")
    out = np.zeros(n if n > 0 else 0, dtype=np.int32)
    cdef int32_t[::1] o = out
    for i in range(n):
        o[i] = _class_of(&sym[0] if sym.shape[0] > 0 else NULL, ptr[i], ptr[i + 1], &sym_rank[0] if S > 0 else NULL,
                         &sym_class[0] if S > 0 else NULL, empty_class)
    return out


def slot_mbr(const int64_t[::1] s_ptr, const int64_t[::1] g_ptr, const int64_t[::1] g_unit,
             const int64_t[::1] u_ptr, const uint8_t[::1] u_slot0, const int64_t[::1] part_half,
             const int64_t[::1] node_ptr, const int64_t[:, ::1] pairs, const double[::1] pair_p,
             const int64_t[::1] pm_ptr, const int32_t[::1] pm_sym, const double[:, :, ::1] phi, bint r2l,
             int bos, double prune, int64_t beam, int64_t n_cand, double support_min,
             bint marginals=False, object symbols=None, object factory=None, int64_t k_offset=0,
             int64_t expand=0, int64_t wide=0, double rescale=0.0, double empty_weight=1.0,
             const double[::1] g_weight=None, const double[:, ::1] g_factor=None,
             const uint8_t[::1] g_apply=None, const int32_t[::1] sym_rank=None,
             const int32_t[::1] sym_class=None, int32_t empty_class=0):
    """Per-slot MBR choices (or, with ``marginals``, the whole slot marginals) of every slot of
    every sentence; layout and semantics: the module docstring.

    Returns, per sentence ``k`` (groups ``s_ptr[k]:s_ptr[k+1]``), per slot: ``factory(surface,
    prob)`` (default: the tuple ``(surface, prob)``), or with ``marginals`` a dict ``{surface:
    prob}`` in ranked order; ``surface`` is a tuple of symbol ids, or of ``symbols[id]``.
    ``expand``/``wide``/``rescale``: mbr's ``EXACT_EXPAND``/``EXACT_WIDE``/``EXACT_RESCALE``
    (0: no cap, no rescaling).  ``g_weight`` (one per ``g_unit`` entry, each group's summing to 1):
    the trees' weights in the mixture instead of ``1/K`` each.  ``g_factor`` (``(G, C)``, finite,
    >= 0), ``g_apply`` (``(G,)``), ``sym_rank``, ``sym_class`` (``(S,)``, classes in ``0..C-1``) and
    ``empty_class``, all or none: the class factors of each group where ``g_apply`` is set (the
    module docstring, "Class factors").  Raises ValueError: E189 for inconsistent arrays, E180 for a slot
    without any surface string, E181 where the channel moves or deletes ``^`` (sentences numbered
    from ``k_offset`` in these messages); MemoryError where an allocation fails."""
    cdef int64_t n_sent = s_ptr.shape[0] - 1, G = g_ptr.shape[0] - 1, U = u_ptr.shape[0] - 1
    cdef int64_t n_nodes = node_ptr.shape[0] - 1, N = pairs.shape[0], B = pm_ptr.shape[0] - 1
    cdef int64_t P = part_half.shape[0]
    cdef int64_t j, g, k, e, status = OK, bad_g = -1
    cdef int S = <int>phi.shape[0]
    cdef int n_given
    cdef Py_ssize_t C = 0
    cdef Work W
    cdef list names, row, out
    cdef dict dct
    cdef tuple surf
    # ---- the arrays must be consistent (the wrapper builds them so; this is the last guard)
    if n_sent < 0 or G < 0 or U < 0 or n_nodes < 0 or B < 0:
        raise _bad("every pointer array needs at least one entry")
    _check_ptr(s_ptr, "s_ptr", G, False)
    _check_ptr(g_ptr, "g_ptr", g_unit.shape[0], True)
    _check_ptr(u_ptr, "u_ptr", P, False)
    _check_ptr(node_ptr, "node_ptr", N, False)
    _check_ptr(pm_ptr, "pm_ptr", pm_sym.shape[0], False)
    if u_slot0.shape[0] != U:
        raise _bad(f"u_slot0 has {u_slot0.shape[0]} entries for {U} units")
    if pairs.shape[1] != 2 or pair_p.shape[0] != N:
        raise _bad(f"pairs has shape ({N}, {pairs.shape[1]}), pair_p {pair_p.shape[0]} entries")
    if S < 1 or phi.shape[1] != S or phi.shape[2] != 4:
        raise _bad(f"phi has shape ({phi.shape[0]}, {phi.shape[1]}, {phi.shape[2]}), not (S, S, 4)")
    if S >= (1 << 30) or not (0 <= bos < S):
        raise _bad(f"'^' is symbol {bos}, outside 0..{S - 1}")
    if not (prune >= 0.0 and isfinite(prune)) or support_min != support_min or beam < 1 or n_cand < 1 \
            or beam > (1 << 30) or n_cand > (1 << 30) or expand < 0 or wide < 0 or not (0.0 <= rescale <= 1.0) \
            or not (empty_weight > 0.0 and isfinite(empty_weight)):
        raise _bad(f"prune={prune}, beam={beam}, n_cand={n_cand}, support_min={support_min}, "
                   f"expand={expand}, wide={wide}, rescale={rescale}, empty_weight={empty_weight}")
    for j in range(g_unit.shape[0]):
        if not (0 <= g_unit[j] < U):
            raise _bad(f"g_unit[{j}] = {g_unit[j]}, outside 0..{U - 1}")
    if g_weight is not None:
        if g_weight.shape[0] != g_unit.shape[0]:
            raise _bad(f"g_weight has {g_weight.shape[0]} entries for {g_unit.shape[0]} in g_unit")
        for j in range(g_weight.shape[0]):
            if not (g_weight[j] >= 0.0 and isfinite(g_weight[j])):
                raise _bad(f"g_weight[{j}] = {g_weight[j]}")
    n_given = (g_factor is not None) + (g_apply is not None) + (sym_rank is not None) + (sym_class is not None)
    if n_given not in (0, 4):
        raise _bad("g_factor, g_apply, sym_rank and sym_class go together")
    if n_given:
        C = g_factor.shape[1]
        if g_factor.shape[0] != G or C < 1 or g_apply.shape[0] != G:
            raise _bad(f"g_factor has shape ({g_factor.shape[0]}, {C}), g_apply {g_apply.shape[0]} entries "
                       f"for {G} groups")
        if sym_rank.shape[0] != S or sym_class.shape[0] != S:
            raise _bad(f"sym_rank has {sym_rank.shape[0]} entries, sym_class {sym_class.shape[0]}, for {S} symbols")
        if not (0 <= empty_class < C):
            raise _bad(f"empty_class = {empty_class}, outside 0..{C - 1}")
        for j in range(S):
            if not (0 <= sym_class[j] < C):
                raise _bad(f"sym_class[{j}] = {sym_class[j]}, outside 0..{C - 1}")
        for g in range(G):
            for j in range(C):
                if not (g_factor[g, j] >= 0.0 and isfinite(g_factor[g, j])):
                    raise _bad(f"g_factor[{g}, {j}] = {g_factor[g, j]}")
    for g in range(G):
        for j in range(g_ptr[g] + 1, g_ptr[g + 1]):
            if u_slot0[g_unit[j]] != u_slot0[g_unit[g_ptr[g]]]:
                raise _bad(f"the units of group {g} disagree on being a slot 0")
    for j in range(P):
        if not (0 <= part_half[j] < 2 * n_nodes):
            raise _bad(f"part {j} reads node half {part_half[j]}, outside 0..{2 * n_nodes - 1}")
    for j in range(N):
        if not (0 <= pairs[j, 0] < B and 0 <= pairs[j, 1] < B):
            raise _bad(f"pair {j} is ({pairs[j, 0]}, {pairs[j, 1]}), puncteme ids outside 0..{B - 1}")
        if not (pair_p[j] >= 0.0 and isfinite(pair_p[j])):
            raise _bad(f"pair {j} has probability {pair_p[j]}")
    for j in range(pm_sym.shape[0]):
        if not (0 <= pm_sym[j] < S):
            raise _bad(f"puncteme symbol {j} is {pm_sym[j]}, outside 0..{S - 1}")
    for j in range(S):
        for k in range(S):
            for e in range(4):
                if not (phi[j, k, e] >= 0.0 and isfinite(phi[j, k, e])):
                    raise _bad(f"phi[{j}, {k}, {e}] = {phi[j, k, e]}")
    if symbols is None:
        names = list(range(S))
    else:
        names = list(symbols)
        if len(names) < S:
            raise _bad(f"{len(names)} symbol names for {S} symbols")
    # ---- the work, without the GIL
    W.u_ptr = &u_ptr[0]
    W.u_slot0 = &u_slot0[0] if U > 0 else NULL
    W.part_half = &part_half[0] if P > 0 else NULL
    W.node_ptr = &node_ptr[0]
    W.pairs = &pairs[0, 0] if N > 0 else NULL
    W.pair_p = &pair_p[0] if N > 0 else NULL
    W.acc.assign(B if B > 0 else 1, 0.0)
    W.pm_ptr = &pm_ptr[0]
    W.pm_sym = &pm_sym[0] if pm_sym.shape[0] > 0 else NULL
    W.phi_store.resize(<size_t>S * S * 4)
    for j in range(S):
        for k in range(S):
            for e in range(4):
                W.phi_store[(k * S + j) * 4 + e] = phi[j, k, e]
    W.phi_t = W.phi_store.data()
    W.S = S
    W.short_codes = S <= 255
    W.bos = bos
    W.r2l = r2l
    W.prune = prune
    W.beam = <int>beam
    W.B = <int>B
    W.expand = expand
    if S <= 255:  # short codes: the transitions of single-survivor reads
        W.tr_off.assign(<size_t>(S + 1) * (B + 1), -1)
        W.tr_cnt.assign(<size_t>(S + 1) * (B + 1), 0)
    W.wide = wide
    W.rescale = rescale
    W.n_cand = <int>n_cand
    W.support_min = support_min
    W.empty_weight = empty_weight
    W.g_weight = &g_weight[0] if g_weight is not None and g_weight.shape[0] > 0 else NULL
    if n_given and G > 0:
        W.g_factor = &g_factor[0, 0]
        W.g_apply = &g_apply[0]
        W.sym_rank = &sym_rank[0]
        W.sym_class = &sym_class[0]
        W.empty_class = empty_class
        W.n_class = <int>C
    W.out_ptr.push_back(0)
    W.g_out.push_back(0)
    with nogil:
        for g in range(G):
            status = _group(&W, &g_ptr[0], &g_unit[0], g, marginals)
            if status != OK:
                bad_g = g
                break
            W.g_out.push_back(<int64_t>W.out_prob.size())
    if status != OK:
        k = 0
        while s_ptr[k + 1] <= bad_g:
            k += 1
        if status == NO_MEMORY:
            raise MemoryError()
        if status == EMPTY:
            raise ValueError(Errors.E180.format(k=k + k_offset, i=bad_g - s_ptr[k]))
        raise ValueError(Errors.E181.format(k=k + k_offset, i=bad_g - s_ptr[k]))
    # ---- the Python result
    out = []
    for k in range(n_sent):
        row = []
        for g in range(s_ptr[k], s_ptr[k + 1]):
            if marginals:
                dct = {}
                for e in range(W.g_out[g], W.g_out[g + 1]):
                    dct[_surface(W.out_sym.data(), W.out_ptr[e], W.out_ptr[e + 1], names)] = W.out_prob[e]
                row.append(dct)
            else:
                e = W.g_out[g]
                surf = _surface(W.out_sym.data(), W.out_ptr[e], W.out_ptr[e + 1], names)
                row.append((surf, W.out_prob[e]) if factory is None else factory(surf, W.out_prob[e]))
        out.append(row)
    return out
