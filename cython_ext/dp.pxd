# The types of the exact DP of ATTACH + NOISYCHANNEL (docs/model.md §3), compiled from
# dp.pyx into spacy_punctgen.inference._dp.  The Python side (Grammar, Lattice, input checks)
# is spacy_punctgen/inference/dp.py; the module's Python signatures are in _dp.pyi.
#
# The automaton of a slot.  Slot i carries the surface punctuation x_i (m symbols).  Its
# channel, run backwards, is a weighted automaton over the underlying strings that could
# have produced x_i: state 0 is "nothing pending", state 1 + k*S + a is "symbol a pending
# after k surface symbols were written", so it has N = 1 + m*S states (one for an empty
# slot).  For an underlying symbol σ, M(σ) is the N x N matrix of its σ-labelled arcs; it is
# never stored: _trans enumerates its arcs from φ each time a vector crosses it.  The
# machine is built left to right on x_i read in the channel's order (reversed for R2L), and
# used transposed for R2L with its start and final states swapped.
#
# Sides and walks.  Every constituent w (the subtree of word w) has two sides, LEFT and
# RIGHT.  On side s its edge is a slot (the first slot of its span on the left, the slot
# after its last word on the right), it sprouts one puncteme there (l on the left, r on the
# right), and its dependents on that side hang between that edge and its own word.  The DP
# only ever moves a vector across things: across a symbol, a puncteme or a whole
# constituent.  A *walk toward LEFT* moves a column vector leftwards (v <- M·v: it holds the
# weight of everything to its right), a walk toward RIGHT moves a row vector rightwards
# (v <- vᵀ·M: the weight of everything to its left).  Whether a walk follows the channel's
# reading order (toward RIGHT in L2R, toward LEFT in R2L) decides whether it pushes weight
# along the machine's arcs or pulls it back, and whether a walk that starts next to a word
# starts in the machine's start state or its final state.  So one function of a side or a
# direction serves both halves of everything; the code never names "row" or "column".
#
# The inside pass, bottom-up.  IN(w), the N_first x N_last matrix of all the punctuation
# inside w's constituent, is kept in its rank-one factored form
#     IN(w) = Σ_{(l,r)} P_w[l,r] · a_l · b_rᵀ,
#     a_l = M(l)·ML(w)   (ML: a walk toward LEFT from w's word across its left dependents)
#     b_r = MR(w)ᵀ·M(r)  (MR: a walk toward RIGHT from w's word across its right dependents)
# because w's word cuts the automata apart.  So for side s the inside pass walks from the
# word toward s across the dependents on side s (each crossed by _in, which needs only their
# stored rows), stores the result (ML or MR), and moves it across each of w's punctemes on
# that side (one row each: A for the left side, B for the right).  A walk stores, at each
# constituent it enters, the vector it enters with: that constituent's *context* on the side
# the walk comes from (CR for a walk toward LEFT, CL for one toward RIGHT).
#
# The sentence.  The roots are the dependents of the sentence itself, which has only a right
# side: its walk starts at slot 0 in the start state, crosses '^' (symbol 0, the only place
# '^' enters), then crosses the roots left to right; the final state of slot n closes it, and
# p(x|T) is that dot product.  The top-down pass starts from the same end: a walk toward LEFT
# from slot n's final state across the roots gives each root its right context.  There is no
# other root chain.
#
# The top-down pass, in pre-order, left to right.  At w, with its contexts β (CL: everything
# left of w's constituent, a row vector at its left edge) and γ (CR, a column vector at its
# right edge), every candidate weighs P·(β·a_l)(b_r·γ).  The semiring then chooses (below),
# and for each side s the context is moved inward across the chosen punctemes (with the
# expected counts of the edits on the way) and walked inward across the dependents on that
# side, setting their contexts on side s; their contexts on the other side are the inside
# pass's.  Then the pass goes down into the dependents, left to right.  The descent keeps its
# own stack (one frame per open node: the node, the side and the next dependent), not the C
# stack: a 16,000-word chain is 16,000 levels deep, and a thread's stack may be 512 KB.
#
# Semirings (Goodman 1999), the Semiring enum, one traversal for all:
#
# * SUM_PRODUCT: ⊕ is +.  Inside: log p(x|T).  Top-down: the posterior marginals
#   μ_w(l,r), normalised node by node, and the expected edit counts.  Over num = double
#   complex with weights P·(1 + i·h·t) it is the complex step: the imaginary parts are h
#   times the derivatives of marginals and counts when each weight is multiplied by e^{λt}.
# * MAX_PRODUCT: ⊕ is max.  Inside: the log-probability of the best joint derivation (the
#   punctemes of every node and one edit sequence per slot).  Top-down: max-marginals, whose
#   argmax per node is the Viterbi tree.
# * SAMPLING: the inside pass is SUM_PRODUCT's; top-down, each node *draws* one candidate with
#   probability ∝ its weight (one uniform per node, in pre-order), and the chosen punctemes
#   get weight 1.  Because the draws go left to right, a dependent's left context is the
#   *drawn* right factor of its left neighbour (set as the pass reaches it), not the inside
#   sum over that neighbour; and after a side's dependents are drawn, the node's drawn factor
#   on that side (a* into ML, b* into MR) is sealed for its parent to read.
#
# Scaling.  Every vector is divided by its largest |real part| after each product and the
# log of the factor accumulated, so 1,000-word sentences neither underflow nor overflow.

ctypedef fused num:
    double
    double complex


# the two sides of a constituent, and the two directions of a walk (an index into the
# [2] arrays below, so an int, not a named enum type)
cdef enum:
    LEFT = 0
    RIGHT = 1


cdef enum Semiring:
    SUM_PRODUCT = 0
    MAX_PRODUCT = 1
    SAMPLING = 2


# the channel's edits on a bigram (a, b): the last axis of φ
cdef enum:
    KEEP = 0          # ab -> ab: writes a, b pending
    ABSORB_LEFT = 1   # ab -> a: b deleted, a pending
    ABSORB_RIGHT = 2  # ab -> b: a deleted, b pending
    TRANSPOSE = 3     # ab -> ba: writes b, a pending


# How _trans moves a vector across M'(σ), the L2R machine: GATHER computes M'·v (each state
# pulls from its successors), SCATTER vᵀ·M' (each state pushes to its successors).
cdef enum Flow:
    GATHER = 0
    SCATTER = 1


cdef struct Slot:
    const int* x      # the surface symbols, in the order the channel reads them
    int m             # len(x)
    int N             # automaton states: 1 + m*S
    bint free         # no surface observed (restoration's unwritten gaps): one state, every
                      #   underlying symbol crosses it with weight 1 (the channel's outputs sum to 1)


# One sentence's lattice, as pointers into the Lattice and Grammar arrays.  Arrays indexed
# [side] hold the LEFT and RIGHT version of the same thing.
cdef struct Tree:
    int n                   # words
    int S                   # symbols
    const int* first        # first word of w's constituent (its LEFT edge is slot first[w])
    const int* last         # last word (its RIGHT edge is slot last[w] + 1)
    const int* kid_ptr      # w's dependents are kids[kid_ptr[w]:kid_ptr[w+1]], in order,
    const int* kids         #   the first nleft[w] of them on its left
    const int* nleft
    const int* order        # post-order (the inside pass)
    const int* roots        # the sentence's dependents, in order
    int n_roots
    const int* cand_ptr     # w's candidates are cand_ptr[w]:cand_ptr[w+1]
    const int* cand_u[2]    # a candidate's left / right puncteme, as an index among its node's
    const int* u_ptr[2]     # w's distinct left / right punctemes are u[s][u_ptr[s][w]:...],
    const int* u[2]         #   one stored row each
    const int* pm_ptr       # puncteme p is the symbols pm_sym[pm_ptr[p]:pm_ptr[p+1]]
    const int* pm_sym
    const int* pm_rest[2]   # p without the symbol a walk toward LEFT (RIGHT) crosses last:
                            #   its tail (head) puncteme, -1 if none; rows share work through it
    int* loc                # scratch, one per puncteme, all -1 between uses
    int max_len             # longest puncteme
    Slot* slots             # n + 1
    const double* phi       # φ[a, b, e], S x S x 4
    bint r2l


# Where each node's vectors live in the pass's buffer (offsets in elements), per side.
cdef struct Store:
    long* fac[2]            # the rows a_l (LEFT, N_first each) / b_r (RIGHT, N_last each)
    long* inner[2]          # ML / MR (sampling: the drawn a* / b*)
    long* ctx[2]            # the contexts: CL = β (LEFT edge) / CR = γ (RIGHT edge)
    double* lfac[2]         # log scale of the stored rows: a_true = a_stored·exp(lfac[LEFT])
    double* nfac[2]         # the rows' normaliser: a_stored = M(l)·ML_stored / nfac[LEFT]


# One pass over one sentence.  A struct cannot be fused, so the num arrays are held untyped;
# each function sees them through its own num specialisation.
cdef struct Pass:
    Semiring semiring
    bint want_counts        # accumulate the expected edit counts (top-down, SUM_PRODUCT)
    Tree* t
    Store* st
    void* buf               # num: every node's rows, ML, MR, CL, CR
    const void* P           # num[K]: the candidates' weights P_w[l, r]
    void* mu                # num[K]: (max-)marginals; SAMPLING: the candidates' weights
    void* counts            # num[S*S*4]
    long* choice            # SAMPLING: the drawn candidate of every node
    const double* uniforms  # SAMPLING: one uniform per node, consumed in pre-order
    int next_u
    int* stack              # the top-down pass's explicit stack: 3 ints per frame, n + 1 frames
    const long* fin         # inside pass alone, compact rows (dp.pyx _compact_layout): where a node's
    const long* at          #   rows end up, and where they are computed; NULL for the stored layout
    # num scratch, never held from one node to the next: vectors of the largest N ...
    void* v
    void* v2
    void* tmp
    void* g
    void* acc
    # ... one entry per puncteme of a node ...
    void* ts
    void* ss
    void* tl
    void* tr
    # ... and the longest puncteme's partial products
    void* part
