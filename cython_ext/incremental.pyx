# cython: language_level=3
"""Compiled loops of paper 003's incremental parser-punctuator (CPP and UPP) and its POS tagger.

Why: beam search over a 2n-step transition sequence scores every beam item with ~58 hashed
feature templates at every step; in Python one EWT training epoch would take hours, here it
takes seconds.  The transition system, its constraints and the oracle are specified (and
mirrored in plain Python for the tests) in ``spacy_punctgen/incremental/system.py``; the
Python face of this module is ``spacy_punctgen/inference/incremental.py``.

A state is one int32 row: a header, then per-word arrays (head, mark, two leftmost and two
rightmost children, left/right valency), the stack and the action history.  An action code is
``atype | mark << 2`` with atype Shift 0, RightArc 1, LeftArc 2, Reduce 3 (mark only for Shift
and RightArc).  Weights are hashed feature rows ``W[bucket, output]`` (float32) with the
averaging accumulator ``U`` (float64): the averaged weights are ``W - U / c``.
"""
import numpy as np
from libc.string cimport memcpy
from libc.stdint cimport uint64_t, int64_t

cdef enum:
    SH = 0
    RA = 1
    LA = 2
    RE = 3
    H_I = 0
    H_SLEN = 1
    H_ROOTS = 2
    H_FORCED = 3
    H_NACT = 4
    HDR = 5
    N_TEMPLATES = 58
    N_TAG_TEMPLATES = 17
    MAX_D = 15
    M_UPP = 0
    M_CPP = 1

UPP = 0
CPP = 1


def row_length(int n):
    """The length of one state row for a document of ``n`` words."""
    return HDR + 11 * n


cdef inline int* _heads(int* row) noexcept nogil:
    return row + HDR


cdef inline void init_row(int* row, int n) noexcept nogil:
    cdef int k
    for k in range(HDR):
        row[k] = 0
    for k in range(HDR, HDR + 6 * n):
        row[k] = -1
    for k in range(HDR + 6 * n, HDR + 8 * n):
        row[k] = 0


cdef inline bint legal(const int* row, int n, int code, const int* is_full) noexcept nogil:
    """May action ``code`` be taken in state ``row`` (preconditions and the two constraints)?"""
    cdef int atype = code & 3, mark = code >> 2
    cdef int i = row[H_I], slen = row[H_SLEN], roots = row[H_ROOTS]
    cdef int s0
    if row[H_FORCED] or i >= n:  # succeeding constraint / end of the stream: pop only
        return atype == RE and slen > 0
    if atype == SH:
        return (not is_full[mark]) or roots == 0  # proceeding constraint: one tree after it
    if slen == 0:
        return False
    s0 = row[HDR + 8 * n + slen - 1]
    if atype == RA:
        return (not is_full[mark]) or roots == 1
    if atype == LA:
        return row[HDR + s0] < 0
    return row[HDR + s0] >= 0  # RE mid-stream: only a word that has its head


cdef inline void add_arc(int* row, int n, int h, int d) noexcept nogil:
    cdef int* lm = row + HDR + 2 * n
    cdef int* lm2 = row + HDR + 3 * n
    cdef int* rm = row + HDR + 4 * n
    cdef int* rm2 = row + HDR + 5 * n
    row[HDR + d] = h
    if d < h:
        row[HDR + 6 * n + h] += 1
        if lm[h] < 0 or d < lm[h]:
            lm2[h] = lm[h]
            lm[h] = d
        elif lm2[h] < 0 or d < lm2[h]:
            lm2[h] = d
    else:
        row[HDR + 7 * n + h] += 1
        if rm[h] < 0 or d > rm[h]:
            rm2[h] = rm[h]
            rm[h] = d
        elif rm2[h] < 0 or d > rm2[h]:
            rm2[h] = d


cdef inline void apply(int* row, int n, int code, const int* is_full) noexcept nogil:
    cdef int atype = code & 3, mark = code >> 2
    cdef int i = row[H_I], slen = row[H_SLEN]
    cdef int* stack = row + HDR + 8 * n
    cdef int s0
    if atype == SH or atype == RA:
        if atype == RA:
            add_arc(row, n, stack[slen - 1], i)
        else:
            row[H_ROOTS] += 1
        stack[slen] = i
        row[H_SLEN] = slen + 1
        row[HDR + n + i] = mark
        row[H_I] = i + 1
        if is_full[mark]:
            row[H_FORCED] = 1
    elif atype == LA:
        add_arc(row, n, i, stack[slen - 1])
        row[H_SLEN] = slen - 1
        row[H_ROOTS] -= 1
    else:
        s0 = stack[slen - 1]
        if row[HDR + s0] < 0:
            row[H_ROOTS] -= 1
        row[H_SLEN] = slen - 1
        if slen == 1:
            row[H_FORCED] = 0
    row[HDR + 9 * n + row[H_NACT]] = code
    row[H_NACT] += 1


cdef inline uint64_t mix(uint64_t h, int64_t v) noexcept nogil:
    h ^= <uint64_t>(v + 7) * <uint64_t>0x9E3779B97F4A7C15
    h = (h ^ (h >> 31)) * <uint64_t>0xBF58476D1CE4E5B9
    return h ^ (h >> 29)


cdef inline uint64_t f1(int t, int a) noexcept nogil:
    return mix(mix(<uint64_t>(t + 1) * <uint64_t>0xD6E8FEB86659FD93, a), 0)


cdef inline uint64_t f2(int t, int a, int b) noexcept nogil:
    return mix(mix(mix(<uint64_t>(t + 1) * <uint64_t>0xD6E8FEB86659FD93, a), b), 0)


cdef inline uint64_t f3(int t, int a, int b, int c) noexcept nogil:
    return mix(mix(mix(mix(<uint64_t>(t + 1) * <uint64_t>0xD6E8FEB86659FD93, a), b), c), 0)


cdef inline uint64_t f4(int t, int a, int b, int c, int d) noexcept nogil:
    return mix(mix(mix(mix(mix(<uint64_t>(t + 1) * <uint64_t>0xD6E8FEB86659FD93, a), b), c), d), 0)


cdef inline int at(const int* arr, int x) noexcept nogil:
    return arr[x] if x >= 0 else -1


cdef void features(const int* row, int n, const int* words, const int* tags, uint64_t mask,
                   uint64_t* out) noexcept nogil:
    """The paper's Table 2 templates without the dependency-label ones (the parser is unlabeled)."""
    cdef int i = row[H_I], slen = row[H_SLEN]
    cdef const int* heads = row + HDR
    cdef const int* lm = row + HDR + 2 * n
    cdef const int* lm2 = row + HDR + 3 * n
    cdef const int* rm = row + HDR + 4 * n
    cdef const int* rm2 = row + HDR + 5 * n
    cdef const int* nl = row + HDR + 6 * n
    cdef const int* nr = row + HDR + 7 * n
    cdef int s = row[HDR + 8 * n + slen - 1] if slen > 0 else -1
    cdef int q0 = i if i < n else -1
    cdef int q1 = i + 1 if i + 1 < n else -1
    cdef int q2 = i + 2 if i + 2 < n else -1
    cdef int ws = at(words, s), ps = at(tags, s), w0 = at(words, q0), p0 = at(tags, q0)
    cdef int w1 = at(words, q1), p1 = at(tags, q1), w2 = at(words, q2), p2 = at(tags, q2)
    cdef int sh = at(heads, s), sl = at(lm, s), sr = at(rm, s), sl2 = at(lm2, s), sr2 = at(rm2, s)
    cdef int sh2 = at(heads, sh), ql = at(lm, q0), ql2 = at(lm2, q0)
    cdef int psh = at(tags, sh), psl = at(tags, sl), psr = at(tags, sr), p0l = at(tags, ql)
    cdef int d = -1
    cdef int vl = at(nl, s), vr = at(nr, s), v0 = at(nl, q0)
    if s >= 0 and q0 >= 0:
        d = q0 - s if q0 - s < MAX_D else MAX_D
    out[0] = f1(0, ws)
    out[1] = f1(1, w0)
    out[2] = f1(2, w1)
    out[3] = f1(3, w2)
    out[4] = f1(4, ps)
    out[5] = f1(5, p0)
    out[6] = f1(6, p1)
    out[7] = f1(7, p2)
    out[8] = f2(8, ws, ps)
    out[9] = f2(9, w0, p0)
    out[10] = f2(10, w1, p1)
    out[11] = f2(11, w2, p2)
    out[12] = f4(12, ws, ps, w0, p0)
    out[13] = f3(13, ws, ps, w0)
    out[14] = f3(14, ws, ps, p0)
    out[15] = f3(15, ws, w0, p0)
    out[16] = f3(16, ps, w0, p0)
    out[17] = f2(17, ws, w0)
    out[18] = f2(18, ps, p0)
    out[19] = f2(19, p0, p1)
    out[20] = f3(20, ps, p0, p1)
    out[21] = f3(21, p0, p1, p2)
    out[22] = f3(22, psh, ps, p0)
    out[23] = f3(23, ps, psl, p0)
    out[24] = f3(24, ps, psr, p0)
    out[25] = f3(25, ps, p0, p0l)
    out[26] = f2(26, ws, d)
    out[27] = f2(27, ps, d)
    out[28] = f2(28, w0, d)
    out[29] = f2(29, p0, d)
    out[30] = f3(30, ws, w0, d)
    out[31] = f3(31, ps, p0, d)
    out[32] = f2(32, ws, vl)
    out[33] = f2(33, ps, vl)
    out[34] = f2(34, ws, vr)
    out[35] = f2(35, ps, vr)
    out[36] = f2(36, w0, v0)
    out[37] = f2(37, p0, v0)
    out[38] = f1(38, at(words, sh))
    out[39] = f1(39, psh)
    out[40] = f1(40, at(words, sl))
    out[41] = f1(41, psl)
    out[42] = f1(42, at(words, sr))
    out[43] = f1(43, psr)
    out[44] = f1(44, at(words, ql))
    out[45] = f1(45, p0l)
    out[46] = f1(46, at(words, sh2))
    out[47] = f1(47, at(tags, sh2))
    out[48] = f1(48, at(words, sl2))
    out[49] = f1(49, at(tags, sl2))
    out[50] = f1(50, at(words, sr2))
    out[51] = f1(51, at(tags, sr2))
    out[52] = f1(52, at(words, ql2))
    out[53] = f1(53, at(tags, ql2))
    out[54] = f3(54, ps, psl, at(tags, sl2))
    out[55] = f3(55, ps, psr, at(tags, sr2))
    out[56] = f3(56, ps, psh, at(tags, sh2))
    out[57] = f3(57, p0, p0l, at(tags, ql2))
    cdef int k
    for k in range(N_TEMPLATES):
        out[k] &= mask


cdef inline void score_rows(const float[:, ::1] W, const uint64_t* feats, int nf, double* out) noexcept nogil:
    cdef int n_out = W.shape[1], j, o
    cdef const float* w
    for o in range(n_out):
        out[o] = 0.0
    for j in range(nf):
        w = &W[feats[j], 0]
        for o in range(n_out):
            out[o] += w[o]


cdef inline void update(float[:, ::1] W, double[:, ::1] U, const uint64_t* feats, int nf, int o,
                        float delta, double c) noexcept nogil:
    cdef int j
    for j in range(nf):
        W[feats[j], o] += delta
        U[feats[j], o] += c * delta


cdef inline int w_out(int code, int mode, int K) noexcept nogil:
    cdef int atype = code & 3
    if mode == M_CPP:
        return atype
    if atype == SH:
        return code >> 2
    if atype == RA:
        return K + (code >> 2)
    return 2 * K + (atype - LA)


cdef inline int c_out(int code, int K) noexcept nogil:
    cdef int atype = code & 3
    if atype == SH:
        return code >> 2
    if atype == RA:
        return K + (code >> 2)
    return -1


cdef int _candidate_codes(int K, int* codes) noexcept nogil:
    """Every action code in the fixed enumeration order (ties go to the earliest)."""
    cdef int m, k = 0
    for m in range(K):
        codes[k] = SH | (m << 2)
        k += 1
    for m in range(K):
        codes[k] = RA | (m << 2)
        k += 1
    codes[k] = LA
    codes[k + 1] = RE
    return k + 2


cdef double _code_score(int code, int mode, int K, const double* ws, const double* cs) noexcept nogil:
    cdef int co
    cdef double s = ws[w_out(code, mode, K)]
    if mode == M_CPP:
        co = c_out(code, K)
        if co >= 0:
            s += cs[co]
    return s


def replay(const int[::1] codes, int n, const int[::1] is_full):
    """Apply ``codes`` from the empty state; return (heads, marks, ok): ``ok`` is False at the
    first illegal action (the rest are not applied)."""
    cdef int[::1] row = np.empty(HDR + 11 * n, dtype=np.int32)
    cdef Py_ssize_t t
    init_row(&row[0], n)
    for t in range(codes.shape[0]):
        if not legal(&row[0], n, codes[t], &is_full[0]):
            return np.asarray(row[HDR:HDR + n]).copy(), np.asarray(row[HDR + n:HDR + 2 * n]).copy(), False
        apply(&row[0], n, codes[t], &is_full[0])
    return np.asarray(row[HDR:HDR + n]).copy(), np.asarray(row[HDR + n:HDR + 2 * n]).copy(), True


def state_features(const int[::1] codes, int n, const int[::1] words, const int[::1] tags,
                   const int[::1] is_full, uint64_t mask):
    """The feature buckets of the state reached by ``codes`` (for the tests)."""
    cdef int[::1] row = np.empty(HDR + 11 * n, dtype=np.int32)
    cdef uint64_t[::1] out = np.empty(N_TEMPLATES, dtype=np.uint64)
    cdef Py_ssize_t t
    init_row(&row[0], n)
    for t in range(codes.shape[0]):
        apply(&row[0], n, codes[t], &is_full[0])
    features(&row[0], n, &words[0], &tags[0], mask, &out[0])
    return np.asarray(out)


def greedy_decode(const int[::1] words, const int[::1] tags, const float[:, ::1] W, C, int mode,
                  const int[::1] is_full):
    """The best legal action at each step (no beam): the reference that beam 1 must equal."""
    cdef int n = words.shape[0], K = is_full.shape[0]
    cdef int[::1] row = np.empty(HDR + 11 * n, dtype=np.int32)
    cdef uint64_t[::1] feats = np.empty(N_TEMPLATES, dtype=np.uint64)
    cdef double[::1] ws = np.zeros(max(W.shape[1], 1), dtype=np.float64)
    cdef double[::1] cs = np.zeros(2 * K, dtype=np.float64)
    cdef int[::1] codes = np.empty(2 * K + 2, dtype=np.int32)
    cdef const float[:, ::1] Cv
    cdef uint64_t mask = W.shape[0] - 1
    cdef int nc = _candidate_codes(K, &codes[0]), t, k, best
    cdef double s, best_s
    if mode == M_CPP:
        Cv = C
    init_row(&row[0], n)
    for t in range(2 * n):
        features(&row[0], n, &words[0], &tags[0], mask, &feats[0])
        score_rows(W, &feats[0], N_TEMPLATES, &ws[0])
        if mode == M_CPP:
            score_rows(Cv, &feats[0], N_TEMPLATES, &cs[0])
        best = -1
        best_s = 0.0
        for k in range(nc):
            if legal(&row[0], n, codes[k], &is_full[0]):
                s = _code_score(codes[k], mode, K, &ws[0], &cs[0])
                if best < 0 or s > best_s:
                    best, best_s = k, s
        apply(&row[0], n, codes[best], &is_full[0])
    return np.asarray(row[HDR + 9 * n:HDR + 11 * n]).copy()


def beam_doc(const int[::1] words, const int[::1] tags, float[:, ::1] W, double[:, ::1] U,
             C, CU, int mode, const int[::1] is_full, int beam, gold, double[::1] counter, forced=None):
    """Beam search over one document; with ``gold`` (its oracle codes) also train.

    Training is the generalised perceptron with early update (Collins & Roark 2004, as
    Zhang & Clark 2008): when the gold item falls out of the beam, the weights move towards
    the gold prefix and away from the best item's prefix (both from the last restart), and the
    beam restarts from the gold state, so the rest of a long stream still teaches (LaSO-style).
    In CPP the parser's weights ``W`` learn only action types this way; the mark classifier
    ``C`` is trained locally, on each gold Shift/RightArc state (the cascade's second,
    independent sub-model).  ``counter[0]`` counts steps for the averaging and
    ``counter[1]`` the updates.  ``forced``: a mark per word, -1 where free (decoding only: the
    marks live mode has already emitted).  Returns the best final item's codes, heads and marks."""
    cdef int n = words.shape[0], K = is_full.shape[0], L = HDR + 11 * n
    cdef bint train = gold is not None
    cdef const int[::1] gcodes
    cdef float[:, ::1] Cv
    cdef double[:, ::1] CUv
    cdef uint64_t mask = W.shape[0] - 1
    cdef int[:, ::1] cur = np.empty((beam, L), dtype=np.int32)
    cdef int[:, ::1] nxt = np.empty((beam, L), dtype=np.int32)
    cdef int[::1] grow = np.empty(L, dtype=np.int32)
    cdef int[::1] base = np.empty(L, dtype=np.int32)
    cdef int[::1] scratch = np.empty(L, dtype=np.int32)
    cdef int[:, ::1] tmp
    cdef double[::1] cur_score = np.zeros(beam, dtype=np.float64)
    cdef double[::1] nxt_score = np.zeros(beam, dtype=np.float64)
    cdef int[::1] cur_gold = np.zeros(beam, dtype=np.int32)
    cdef int[::1] nxt_gold = np.zeros(beam, dtype=np.int32)
    cdef double[::1] tmpd
    cdef int[::1] tmpi
    cdef uint64_t[::1] feats = np.empty(N_TEMPLATES, dtype=np.uint64)
    cdef double[::1] ws = np.zeros(W.shape[1], dtype=np.float64)
    cdef double[::1] cs = np.zeros(2 * K, dtype=np.float64)
    cdef int[::1] codes = np.empty(2 * K + 2, dtype=np.int32)
    cdef int nc = _candidate_codes(K, &codes[0])
    cdef int[::1] top_parent = np.empty(beam, dtype=np.int32)
    cdef int[::1] top_code = np.empty(beam, dtype=np.int32)
    cdef double[::1] top_score = np.empty(beam, dtype=np.float64)
    cdef int[::1] top_gold = np.empty(beam, dtype=np.int32)
    cdef int size = 1, cnt, t, b, k, p, q, code, restart = 0, any_gold, gcode, m, best_m, co, gm
    cdef double s, best_s
    cdef const int[::1] fmv
    cdef const int* fm = NULL
    if forced is not None:
        fmv = forced
        fm = &fmv[0]
    if train:
        gcodes = gold
        if gcodes.shape[0] != 2 * n:
            raise ValueError("gold codes must be 2n long")
    if mode == M_CPP:
        Cv = C
        if train:
            CUv = CU
    init_row(&cur[0, 0], n)
    cur_score[0] = 0.0
    cur_gold[0] = 1
    if train:
        init_row(&grow[0], n)
        init_row(&base[0], n)
    for t in range(2 * n):
        if train:
            counter[0] += 1
            gcode = gcodes[t]
            if not legal(&grow[0], n, gcode, &is_full[0]):
                raise ValueError(f"gold action {gcode} at step {t} is illegal")
            if mode == M_CPP and (gcode & 3) <= RA:  # the cascade's mark classifier, trained locally
                features(&grow[0], n, &words[0], &tags[0], mask, &feats[0])
                score_rows(Cv, &feats[0], N_TEMPLATES, &cs[0])
                best_m = -1
                best_s = 0.0
                for m in range(K):
                    if legal(&grow[0], n, (gcode & 3) | (m << 2), &is_full[0]):
                        co = c_out((gcode & 3) | (m << 2), K)
                        if best_m < 0 or cs[co] > best_s:
                            best_m, best_s = m, cs[co]
                gm = gcode >> 2
                if best_m != gm:
                    update(Cv, CUv, &feats[0], N_TEMPLATES, c_out(gcode, K), 1.0, counter[0])
                    update(Cv, CUv, &feats[0], N_TEMPLATES, c_out((gcode & 3) | (best_m << 2), K), -1.0, counter[0])
        cnt = 0
        for b in range(size):
            features(&cur[b, 0], n, &words[0], &tags[0], mask, &feats[0])
            score_rows(W, &feats[0], N_TEMPLATES, &ws[0])
            if mode == M_CPP:
                score_rows(Cv, &feats[0], N_TEMPLATES, &cs[0])
            for k in range(nc):
                code = codes[k]
                if not legal(&cur[b, 0], n, code, &is_full[0]):
                    continue
                if fm != NULL and (code & 3) <= RA and fm[cur[b, H_I]] >= 0 and (code >> 2) != fm[cur[b, H_I]]:
                    continue
                s = cur_score[b] + _code_score(code, mode, K, &ws[0], &cs[0])
                if cnt == beam and s <= top_score[cnt - 1]:
                    continue
                p = cnt if cnt < beam else beam - 1
                while p > 0 and top_score[p - 1] < s:
                    if p < beam:
                        top_score[p] = top_score[p - 1]
                        top_parent[p] = top_parent[p - 1]
                        top_code[p] = top_code[p - 1]
                        top_gold[p] = top_gold[p - 1]
                    p -= 1
                top_score[p] = s
                top_parent[p] = b
                top_code[p] = code
                top_gold[p] = train and cur_gold[b] and code == gcode
                if cnt < beam:
                    cnt += 1
        any_gold = 0
        for q in range(cnt):
            memcpy(&nxt[q, 0], &cur[top_parent[q], 0], L * sizeof(int))
            apply(&nxt[q, 0], n, top_code[q], &is_full[0])
            nxt_score[q] = top_score[q]
            nxt_gold[q] = top_gold[q]
            any_gold |= top_gold[q]
        tmp = cur
        cur = nxt
        nxt = tmp
        tmpd = cur_score
        cur_score = nxt_score
        nxt_score = tmpd
        tmpi = cur_gold
        cur_gold = nxt_gold
        nxt_gold = tmpi
        size = cnt
        if train:
            apply(&grow[0], n, gcode, &is_full[0])
            if not any_gold or (t == 2 * n - 1 and not cur_gold[0]):
                _early_update(&base[0], &cur[0, 9 * n + HDR], &gcodes[0], restart, t + 1, n, words, tags,
                              W, U, mode, K, is_full, mask, counter[0])
                counter[1] += 1
                memcpy(&cur[0, 0], &grow[0], L * sizeof(int))
                memcpy(&base[0], &grow[0], L * sizeof(int))
                cur_score[0] = 0.0
                cur_gold[0] = 1
                size = 1
                restart = t + 1
    return np.asarray(cur[0, HDR + 9 * n:HDR + 11 * n]).copy(), np.asarray(cur[0, HDR:HDR + n]).copy(), \
        np.asarray(cur[0, HDR + n:HDR + 2 * n]).copy()


cdef void _early_update(const int* base, const int* pred, const int* gold, int start, int stop, int n,
                        const int[::1] words, const int[::1] tags, float[:, ::1] W, double[:, ::1] U,
                        int mode, int K, const int[::1] is_full, uint64_t mask, double c):
    """+1 on the gold prefix's (state, output) pairs, -1 on the predicted prefix's, both replayed
    from ``base`` (the state at step ``start``) up to step ``stop``."""
    cdef int L = HDR + 11 * n, t, first = start
    cdef int[::1] row = np.empty(L, dtype=np.int32)
    cdef uint64_t[::1] feats = np.empty(N_TEMPLATES, dtype=np.uint64)
    cdef int which
    cdef const int* seq
    while first < stop and pred[first] == gold[first]:  # shared prefix: the updates cancel
        first += 1
    if first == stop:
        return
    for which in range(2):
        seq = gold if which == 0 else pred
        memcpy(&row[0], base, L * sizeof(int))
        for t in range(start, stop):
            if t >= first:
                features(&row[0], n, &words[0], &tags[0], mask, &feats[0])
                update(W, U, &feats[0], N_TEMPLATES, w_out(seq[t], mode, K), 1.0 if which == 0 else -1.0, c)
            apply(&row[0], n, seq[t], &is_full[0])


# ---- the POS tagger: greedy left-to-right averaged perceptron ----

cdef void tag_features(int i, int n, const int* words, const int[:, ::1] props, const int* tags,
                       uint64_t mask, uint64_t* out) noexcept nogil:
    """``words``: rows of ``props`` (word hash, suffixes of 1-3 letters, first letter, shape)."""
    cdef int w = words[i]
    cdef int wp = words[i - 1] if i >= 1 else -1
    cdef int wpp = words[i - 2] if i >= 2 else -1
    cdef int wn = words[i + 1] if i + 1 < n else -1
    cdef int wnn = words[i + 2] if i + 2 < n else -1
    cdef int tp = tags[i - 1] if i >= 1 else -1
    cdef int tpp = tags[i - 2] if i >= 2 else -1
    cdef int hw = props[w, 0]
    cdef int hp = props[wp, 0] if wp >= 0 else -1
    out[0] = f1(100, 0)
    out[1] = f1(101, hw)
    out[2] = f1(102, hp)
    out[3] = f1(103, props[wn, 0] if wn >= 0 else -1)
    out[4] = f1(104, props[wpp, 0] if wpp >= 0 else -1)
    out[5] = f1(105, props[wnn, 0] if wnn >= 0 else -1)
    out[6] = f1(106, props[w, 1])
    out[7] = f1(107, props[w, 2])
    out[8] = f1(108, props[w, 3])
    out[9] = f1(109, props[w, 4])
    out[10] = f1(110, props[w, 5])
    out[11] = f1(111, tp)
    out[12] = f2(112, tpp, tp)
    out[13] = f2(113, tp, hw)
    out[14] = f1(114, props[wn, 3] if wn >= 0 else -1)
    out[15] = f1(115, props[wp, 3] if wp >= 0 else -1)
    out[16] = f2(116, hp, hw)
    cdef int k
    for k in range(N_TAG_TEMPLATES):
        out[k] &= mask


def tag_doc(const int[::1] words, const int[:, ::1] props, float[:, ::1] W, U, gold, double[::1] counter):
    """Tag one document left to right; with ``gold`` tags also make the perceptron's updates
    (``U``: the averaging accumulator, ``counter[0]``: tokens seen).  Returns the tags."""
    cdef int n = words.shape[0], i, o, best, T = W.shape[1]
    cdef int[::1] out = np.empty(n, dtype=np.int32)
    cdef uint64_t[::1] feats = np.empty(N_TAG_TEMPLATES, dtype=np.uint64)
    cdef double[::1] sc = np.zeros(T, dtype=np.float64)
    cdef uint64_t mask = W.shape[0] - 1
    cdef bint train = gold is not None
    cdef const int[::1] g
    cdef double[:, ::1] Uv
    if train:
        g = gold
        Uv = U
    for i in range(n):
        tag_features(i, n, &words[0], props, &out[0], mask, &feats[0])
        score_rows(W, &feats[0], N_TAG_TEMPLATES, &sc[0])
        best = 0
        for o in range(1, T):
            if sc[o] > sc[best]:
                best = o
        if train:
            counter[0] += 1
            if best != g[i]:
                update(W, Uv, &feats[0], N_TAG_TEMPLATES, g[i], 1.0, counter[0])
                update(W, Uv, &feats[0], N_TAG_TEMPLATES, best, -1.0, counter[0])
        out[i] = best  # the history features see the predicted tags, as at test time
    return np.asarray(out)
