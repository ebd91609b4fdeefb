"""Device-resident word2vec trainer: skip-gram / CBOW with negative sampling, batched on a GPU.

torch only (no scikit-learn, no numba). :func:`train_sgns_chunk` trains on one
corpus chunk whose (already subsampled, vocabulary-remapped) token ids live on
the device. Everything a step needs is made on the device from the ids: the
positions of a batch of centre words, word2vec's dynamic window (an effective
window drawn uniformly in ``1..window`` per centre), the context words inside
it that stay in the centre's document, and the negatives (Walker's alias
table). Nothing returns to the host between batches; with subword input the
step boundaries of each block of about a million centres are read once
(:mod:`skembed.nn.subwords`).

The update is the shared-negatives scheme of pWord2Vec (Ji et al. 2016) and
BlazingText (Gupta & Khare 2017), done for a whole batch of centres at once
as small batched matrix products: for a centre ``w`` with context words
``c_1 .. c_m`` (``m <= 2 * window``) and noise words ``n_1 .. n_K`` drawn once
for the window::

    C = syn0[c_1 .. c_m]               (m, dim)      input vectors
    outv = syn1neg[w, n_1 .. n_K]         (K + 1, dim)  output vectors
    F = C @ O.T                        (m, K + 1)    scores
    G = (label - sigmoid(F)) * lr      label = 1 in column 0, else 0
    syn0[c_i]    += (G @ O)[i]         (every context row)
    syn1neg[o_j] += (G.T @ C)[j]       (the centre and each noise word)

computed from the parameters as they were before the batch, and applied with
``index_add_`` (a row that occurs several times in the batch receives the sum
of its updates, as lock-free threads would add them one after the other).
For one window this is exactly the update of the CPU kernel (skip-gram with
shared negatives); the CPU kernel applies each window's update before reading
the next window, here the windows of a batch all read the same parameters.

That staleness matters only for rows that occur very often in one batch (the
most frequent words, above all as noise words): summed over thousands of
windows computed at the same point, their update overshoots where sequential
SGD would have corrected itself after a few hundred steps, and training
diverges (measured on an H100, debdocs 11.4M tokens, skip-gram: NaN at 65,536
centres per batch, NaN or a loss of 1e8 at 16,384 without a cap or with a cap
of 64 to 256). Two bounds keep a row's summed step in check; a row below both,
which is nearly every row, gets word2vec's update unchanged:

- ``update_cap``: a row that receives ``n > update_cap`` updates in a batch
  (windows for an output row, examples for an input row) gets their sum scaled
  by ``update_cap / n``, i.e. ``update_cap`` steps along their mean.
- ``curvature_bound`` (skip-gram): the logistic loss of an example ``f = x . y``
  has curvature ``sigmoid'(f) |y|^2`` along ``x``. Gradient descent on a row is
  stable while its step times the curvature summed over the row's examples
  stays below 2, so a row whose ``sum lr * sigmoid'(f) * |y|^2`` exceeds
  ``curvature_bound`` gets its summed update scaled down to the bound. The
  count cap alone let BBC News (0.85M tokens) diverge at 8,192 centres per
  batch (epoch 2, loss 5.8e5), because the vectors' norms grow as training
  goes on; with the bound, skip-gram and FastText trained BBC News, BBC News
  x4, the tweets and debdocs at 8,192 and 32,768 centres on an H200. Bounds of
  1 and 2 cost quality on debdocs (SimLex-999 0.232 and 0.260 at 8,192
  centres), 4 does not (0.265 against 0.267 without the bound; 0.267 at
  32,768 centres), so the default is 4 (``docs/benchmarks/gpu.md``).

The default batch grows with the corpus (:func:`default_batch_words`): a small
corpus needs steps more than it needs speed (on BBC News, 32,768 centres per
batch ended skip-gram's 5 epochs at a loss of 2.64 against 2.50 at 8,192).

CBOW (``sg=False``): the input is the mean of the context input vectors,
``K`` noise words are drawn per centre and the input-side error is added in
full to every context row (word2vec.c, the CPU kernel).

Subword (fastText) input: with ``sub_indptr``/``sub_indices`` a word's input
vector is the mean of its rows ``syn0[sub_indices[sub_indptr[u]:sub_indptr[u +
1]]]`` (its own row and its character n-gram buckets) and the gradient is
added in full to each row, as Facebook fastText, gensim and the CPU kernel do.

The learning rate decays linearly over the chunk's centre positions from
``alpha_start`` to ``alpha_end``, per centre. Scores use the exact sigmoid
(word2vec.c's table saturates beyond ``|f| > 6``; the difference is under
2.5e-3 in ``g``).

Determinism: on the CPU the result is a function of the inputs and ``seed``.
On CUDA ``index_add_`` adds with atomics, so the order of floating-point
additions (and the last bits of the result) varies from run to run.

References
----------
Mikolov, Sutskever, Chen, Corrado & Dean (2013), "Distributed Representations
of Words and Phrases and their Compositionality", NIPS.
Ji, Shah, Satish, Dubey & Sundaram (2016), "Parallelizing Word2Vec in Shared
and Distributed Memory", arXiv:1604.04661.
Gupta & Khare (2017), "BlazingText: Scaling and Accelerating Word2Vec using
Multiple GPUs", MLHPC workshop.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch.nn import functional as F

from .subwords import SubwordBags

__all__ = [
    "BATCH_WORDS_RANGE",
    "DEFAULT_CURVATURE_BOUND",
    "DEFAULT_UPDATE_CAP",
    "STEPS_PER_EPOCH",
    "SubwordBags",
    "default_batch_words",
    "device_tables",
    "train_sgns_chunk",
]

#: smallest and largest default batch (centre words per step), skip-gram and CBOW
BATCH_WORDS_RANGE = {True: (2048, 32768), False: (2048, 65536)}
#: the default batch gives an epoch at least this many steps where the range allows
STEPS_PER_EPOCH = 256
#: most updates a row takes at full weight in one batch (see the module notes)
DEFAULT_UPDATE_CAP = 64.0
#: skip-gram: most summed ``lr * curvature`` a row's step takes at full length (module notes)
DEFAULT_CURVATURE_BOUND = 4.0


def default_batch_words(n_tokens, sg):
    """The default batch: centre words per step for an epoch of ``n_tokens`` tokens.

    The largest power of two in :data:`BATCH_WORDS_RANGE` ``[sg]`` that still gives
    the epoch :data:`STEPS_PER_EPOCH` steps (the range's lower end when none does):
    large corpora get large, fast batches, small ones enough steps to learn in.
    Measured on an H200 (``docs/benchmarks/gpu.md``): BBC News (0.85M tokens) gets 2,048, BBC
    News x4 8,192, debdocs (11.4M) 32,768 for skip-gram.

    Parameters
    ----------
    n_tokens : int
        Tokens in one epoch (before subsampling).
    sg : bool
        Skip-gram (``True``) or CBOW.

    Returns
    -------
    int

    Examples
    --------
    >>> default_batch_words(854_000, True), default_batch_words(11_410_908, True)
    (2048, 32768)
    >>> default_batch_words(11_410_908, False), default_batch_words(10**9, False)
    (32768, 65536)
    """
    lo, hi = BATCH_WORDS_RANGE[bool(sg)]
    batch = lo
    while batch * 2 <= hi and batch * 2 * STEPS_PER_EPOCH <= int(n_tokens):
        batch *= 2
    return batch


def device_tables(neg_prob, neg_alias, device):
    """Put Walker's alias table of the noise distribution on the device.

    Parameters
    ----------
    neg_prob : array-like of shape (n_words,), float32
        Acceptance probability of each column
        (:func:`skembed.kernels.sampling.alias_table`).
    neg_alias : array-like of shape (n_words,), int32
        Alternative outcome of each column.
    device : str or torch.device

    Returns
    -------
    prob : torch.Tensor of shape (n_words,), float32
    alias : torch.Tensor of shape (n_words,), int64
    """
    prob = torch.as_tensor(neg_prob, device=device).to(torch.float32)
    alias = torch.as_tensor(neg_alias, device=device).to(torch.int64)
    return prob, alias


def _draw_negatives(prob, alias, shape, generator):
    """Noise words of the given shape from the alias table (two uniform draws each)."""
    n_words = prob.shape[0]
    t = torch.randint(0, n_words, shape, device=prob.device, generator=generator)
    u = torch.rand(shape, device=prob.device, generator=generator)
    return torch.where(u < prob[t], t, alias[t])


def _cap_scale(index, weight, n_rows, cap):
    """Per-entry factor ``min(1, cap / n_row)``, ``n_row`` the summed ``weight`` of the entry's row."""
    counts = torch.zeros(n_rows, dtype=weight.dtype, device=weight.device)
    counts.index_add_(0, index, weight)
    return (cap / counts.clamp(min=cap)).index_select(0, index)


def _add_rows(mat, index, grad, cap, weight=None, curvature=None):
    """``mat[index] += grad`` summed per row, each row's sum capped at ``cap`` updates.

    ``curvature = (entries, bound)``: per entry, the learning rate times the entry's
    logistic curvature along its row; a row whose entries sum above ``bound`` gets its
    summed step scaled down to ``bound`` (see the module notes).
    """
    if cap is not None:
        w = torch.ones_like(index, dtype=grad.dtype) if weight is None else weight
        grad = grad * _cap_scale(index, w, mat.shape[0], float(cap))[:, None]
    if curvature is not None:
        grad = grad * _cap_scale(index, curvature[0], mat.shape[0], curvature[1])[:, None]
    mat.index_add_(0, index, grad)


@torch.no_grad()
def train_sgns_chunk(
    syn0,
    syn1neg,
    ids,
    offsets,
    *,
    neg_prob,
    neg_alias,
    window,
    negative,
    alpha_start,
    alpha_end,
    seed,
    sg=True,
    subwords=None,
    batch_words=None,
    update_cap=DEFAULT_UPDATE_CAP,
    curvature_bound=DEFAULT_CURVATURE_BOUND,
):
    """Train skip-gram or CBOW with negative sampling on one chunk, in place, on syn0's device.

    Parameters
    ----------
    syn0 : torch.Tensor of shape (n_rows, dim), float32
        Input vectors (``n_rows == n_words`` for Word2Vec; words then n-gram
        buckets with ``subwords``), updated in place.
    syn1neg : torch.Tensor of shape (n_words, dim), float32
        Output vectors of negative sampling, on the same device, updated in place.
    ids : numpy.ndarray or torch.Tensor of shape (n_tokens,), int32 or int64
        Vocabulary ids of the chunk, already remapped and subsampled
        (:func:`skembed.kernels.word2vec.prepare_chunk`); copied to the device
        once if given on the host.
    offsets : numpy.ndarray or torch.Tensor of shape (n_docs + 1,), int64
        Document ``d`` is ``ids[offsets[d]:offsets[d + 1]]``; windows never
        cross a document boundary. ``offsets[0] == 0``, ``offsets[-1] == n_tokens``.
    neg_prob, neg_alias : torch.Tensor of shape (n_words,)
        Alias table of the noise distribution on the device
        (:func:`device_tables`; numpy arrays are accepted and copied).
    window : int >= 1
        Maximum window; the effective window of each centre is drawn
        uniformly in ``1..window``.
    negative : int >= 1
        Noise words per window (skip-gram: shared by its context words) or per
        centre (CBOW). A noise word equal to the centre is skipped.
    alpha_start, alpha_end : float
        Learning rate at the chunk's first and last centre (linear in between).
    seed : int
        Seeds the generator of window sizes and noise words.
    sg : bool, default=True
        Skip-gram (each context word's input vector predicts the centre) or
        CBOW (the mean of the context input vectors predicts it).
    subwords : SubwordBags or None, default=None
        fastText subword input; ``None``: row ``u`` of ``syn0`` is word ``u``'s vector.
    batch_words : int or None, default=None
        Centre positions per step; ``None``: :func:`default_batch_words` of
        the chunk's length (the estimators pass the value for the whole
        corpus). Larger is faster on a GPU (fewer launches; a step costs ~50
        kernel launches, so small batches are bound by the host) and makes
        frequent rows' summed updates staler (see the module notes and
        ``docs/benchmarks/gpu.md``).
    update_cap : float or None, default=DEFAULT_UPDATE_CAP
        A row updated ``n > update_cap`` times in one batch gets the sum of
        its updates scaled by ``update_cap / n`` (see the module notes);
        ``None`` disables it (plain summed updates; stable only for small
        batches).
    curvature_bound : float or None, default=DEFAULT_CURVATURE_BOUND
        Skip-gram only (CBOW ignores it): a row whose summed ``lr * sigmoid'(f)
        * |x|^2`` over the batch's examples exceeds ``curvature_bound`` gets
        its summed update scaled down to that bound (see the module notes);
        ``None`` disables it.

    Returns
    -------
    loss : torch.Tensor, 0-d, float64, on the device
        Sum over examples of ``-log sigmoid(f_pos) - sum log sigmoid(-f_neg)``,
        computed before each batch's update. Not synchronised: read it (e.g.
        ``float(loss)``) once per epoch, not per chunk, to keep the device busy.
    n_examples : torch.Tensor, 0-d, float64, on the device
        (context, centre) pairs in skip-gram, centres with at least one
        context word in CBOW.

    Raises
    ------
    ValueError
        If ``window`` or ``negative`` is below 1, ``batch_words`` below 1, or
        ``syn1neg`` is not on ``syn0``'s device.

    Notes
    -----
    Per step of ``B`` centres and ``W = window`` the work is two gathers of
    ``B * 2W`` and ``B * (K + 1)`` rows, three batched matrix products of
    shapes ``(2W, dim) x (dim, K + 1)`` (skip-gram) and two ``index_add_``
    (plus two small ones counting each row's updates for ``update_cap``);
    none waits on the host. Windows, negatives and learning rates are drawn
    for blocks of about a million centres at once. Slots beyond a
    centre's effective window are computed and masked (about 40% of the
    context slots at ``window=5``), which costs less than compacting them
    would (compaction needs the count on the host).

    Examples
    --------
    >>> import torch
    >>> from skembed.nn.sgns import train_sgns_chunk
    >>> g = torch.Generator().manual_seed(0)
    >>> syn0 = (torch.rand(4, 8, generator=g) - 0.5) / 8
    >>> syn1neg = torch.zeros(4, 8)
    >>> ids = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3], dtype=torch.int32)
    >>> offsets = torch.tensor([0, 8])
    >>> prob, alias = torch.ones(4), torch.arange(4)
    >>> loss, n = train_sgns_chunk(syn0, syn1neg, ids, offsets, neg_prob=prob,
    ...     neg_alias=alias, window=2, negative=2, alpha_start=0.025,
    ...     alpha_end=0.02, seed=1)
    >>> bool(n > 0), bool(loss > 0)
    (True, True)
    """
    if batch_words is None:
        batch_words = default_batch_words(len(ids), sg)
    bound = None if curvature_bound is None else float(curvature_bound)
    window, negative, batch_words = int(window), int(negative), int(batch_words)
    if window < 1 or negative < 1 or batch_words < 1:
        raise ValueError(
            f"window, negative and batch_words must be >= 1, got {window}, {negative}, "
            f"{batch_words}."
        )
    dc = _on_device(syn0, syn1neg, ids, offsets, neg_prob, neg_alias, negative, seed)
    labels, loss, n_examples = dc.labels, dc.loss, dc.n_examples
    n_tok = dc.ids.shape[0]
    if n_tok == 0:
        return loss, n_examples
    step = (float(alpha_end) - float(alpha_start)) / max(n_tok, 1)
    # everything random or positional is drawn for a block of batches at once, so a
    # step is only gathers, three matrix products and two index_add_ (fewer launches)
    block = max(batch_words, (_BLOCK_CENTRES // batch_words) * batch_words)
    for b0 in range(0, n_tok, block):
        stop = min(b0 + block, n_tok)
        plan = _plan_block(dc, b0, stop, window, negative, float(alpha_start), step, syn0.dtype)
        fn = _skipgram_step if sg else _cbow_step
        block_bags = (
            None if subwords is None else subwords.block(plan["ctx"], plan["valid"], batch_words)
        )
        for s, part in enumerate(_batches(plan, plan["n"], batch_words)):
            bags = None if block_bags is None else block_bags.step(s)
            loss_b, n_b = fn(syn0, syn1neg, part, labels, bags, update_cap, bound)
            loss += loss_b
            n_examples += n_b
    return loss, n_examples


def _batches(plan, n, batch_words):
    """The plan's first ``n`` rows in consecutive steps of ``batch_words`` (every key but ``"n"``)."""
    for s0 in range(0, n, batch_words):
        yield {k: v[s0 : s0 + batch_words] for k, v in plan.items() if k != "n"}


def _outputs(centre, negative, prob, alias, gen, dtype):
    """``(out_ids, out_keep)`` of shape (n, K + 1): each centre's output rows (itself, then
    ``negative`` noise words) and their weights (0 for a noise word equal to the centre)."""
    negs = _draw_negatives(prob, alias, (centre.shape[0], negative), gen)
    keep = torch.ones((centre.shape[0], negative + 1), dtype=dtype, device=centre.device)
    keep[:, 1:] = (negs != centre[:, None]).to(dtype)
    return torch.cat([centre[:, None], negs], dim=1), keep


class _DeviceChunk(NamedTuple):
    """A chunk's inputs on ``syn0``'s device (:func:`_on_device`).

    Attributes
    ----------
    ids : torch.Tensor of shape (n_tokens,), int64
    offsets : torch.Tensor of shape (n_docs + 1,), int64
    prob, alias : torch.Tensor of shape (n_words,)
        The noise distribution's alias table (:func:`device_tables`).
    gen : torch.Generator
        Seeded; draws the windows and the noise words.
    labels : torch.Tensor of shape (negative + 1,), syn0's dtype
        ``[1, 0 .. 0]``: the positive, then the noise words.
    loss, n_examples : torch.Tensor, 0-d, float64
        Zero accumulators.
    """

    ids: torch.Tensor
    offsets: torch.Tensor
    prob: torch.Tensor
    alias: torch.Tensor
    gen: torch.Generator
    labels: torch.Tensor
    loss: torch.Tensor
    n_examples: torch.Tensor


def _on_device(syn0, syn1neg, ids, offsets, neg_prob, neg_alias, negative, seed):
    """A chunk's inputs on ``syn0``'s device (a :class:`_DeviceChunk`). Refuses ``syn1neg``
    on another device."""
    dev = syn0.device
    if syn1neg.device != dev:
        raise ValueError(
            f"syn1neg is on {syn1neg.device} but syn0 on {dev}; move both to one device."
        )
    ids = torch.as_tensor(ids).to(device=dev, dtype=torch.int64, non_blocking=True)
    offsets = torch.as_tensor(offsets).to(device=dev, dtype=torch.int64, non_blocking=True)
    prob, alias = device_tables(neg_prob, neg_alias, dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
    labels = torch.zeros(negative + 1, dtype=syn0.dtype, device=dev)
    labels[0] = 1.0
    zeros = [torch.zeros((), dtype=torch.float64, device=dev) for _ in range(2)]
    return _DeviceChunk(ids, offsets, prob, alias, gen, labels, *zeros)


#: centres whose windows and negatives are drawn at once (bounds the plan's memory:
#: about (2 * window + negative) * 12 bytes per centre)
_BLOCK_CENTRES = 1 << 20


def _plan_block(dc, start, stop, window, negative, a0, step, dtype):
    """Contexts, their mask, negatives and learning rates of the centres ``start .. stop - 1``
    of the chunk ``dc`` (a :class:`_DeviceChunk`)."""
    ids, offsets, gen = dc.ids, dc.offsets, dc.gen
    dev = ids.device
    n_tok = ids.shape[0]
    pos = torch.arange(start, stop, device=dev)
    n = stop - start
    centre = ids[start:stop]
    # no context is further than the longest document: the offsets stop there (memory is
    # n x 2 * reach whatever window is), the draw of the effective window is unchanged
    reach = max(1, min(window, int((offsets[1:] - offsets[:-1]).max()) - 1))
    rel = torch.cat([torch.arange(-reach, 0, device=dev), torch.arange(1, reach + 1, device=dev)])
    doc = torch.searchsorted(offsets, pos, right=True) - 1
    lo, hi = offsets[doc], offsets[doc + 1]
    eff = window - torch.randint(0, window, (n,), device=dev, generator=gen)
    ctx_pos = pos[:, None] + rel[None, :]
    valid = (
        (rel.abs()[None, :] <= eff[:, None]) & (ctx_pos >= lo[:, None]) & (ctx_pos < hi[:, None])
    )
    ctx = ids[ctx_pos.clamp_(0, n_tok - 1)]  # (n, 2W)
    out_ids, out_keep = _outputs(centre, negative, dc.prob, dc.alias, gen, dtype)  # (n, K + 1)
    return {
        "n": n,
        "ctx": ctx,
        "valid": valid,
        "validf": valid.to(dtype),
        "out_ids": out_ids,
        "out_keep": out_keep,
        "lr": (a0 + step * pos.to(torch.float64)).to(dtype),
    }


def _scores_to_grad(f, labels, weight, lr):
    """Loss, ``(label - sigmoid(f)) * lr * weight`` and ``sigmoid(f)`` of logistic examples."""
    sign = labels * 2 - 1
    loss = -(F.logsigmoid(sign * f) * weight).sum(dtype=torch.float64)
    sig = torch.sigmoid(f)
    g = (labels - sig) * weight * lr
    return loss, g, sig


def _skipgram_step(syn0, syn1neg, part, labels, bags, cap, bound):
    ctx, validf = part["ctx"], part["validf"]
    out_ids, out_keep, lr = part["out_ids"], part["out_keep"], part["lr"]
    b, m = ctx.shape
    k1 = out_ids.shape[1]
    dim = syn0.shape[1]
    flat_ctx = ctx.reshape(-1)
    flat_out = out_ids.reshape(-1)
    if bags is None:
        C = syn0.index_select(0, flat_ctx).view(b, m, dim)
    else:  # each distinct word's bag is gathered once (skembed.nn.subwords)
        C = bags.means(syn0).index_select(0, bags.inv.reshape(-1)).view(b, m, dim)
    outv = syn1neg.index_select(0, flat_out).view(b, k1, dim)
    f = torch.bmm(C, outv.transpose(1, 2))  # (b, m, K + 1)
    weight = validf[:, :, None] * out_keep[:, None, :]
    loss, g, sig = _scores_to_grad(f, labels, weight, lr[:, None, None])
    grad_c = torch.bmm(g, outv)  # (b, m, dim)
    grad_o = torch.bmm(g.transpose(1, 2), C)  # (b, K + 1, dim)
    # an output row counts once per window that uses it
    used = out_keep * (validf.sum(1, keepdim=True) > 0).to(syn0.dtype)
    curv_o = curv_c = None
    if bound is not None:
        # lr * sigma'(f) per example; along an output row its curvature is |C|^2, along an
        # input row |O|^2 (the Hessian's diagonal blocks of the logistic loss)
        h = sig * (1 - sig) * weight * lr[:, None, None]  # (b, m, K + 1)
        curv_o = (torch.bmm(h.transpose(1, 2), (C * C).sum(-1, keepdim=True)).reshape(-1), bound)
        curv_c = (torch.bmm(h, (outv * outv).sum(-1, keepdim=True)).reshape(-1), bound)
    _add_rows(syn1neg, flat_out, grad_o.reshape(-1, dim), cap, used.reshape(-1), curv_o)
    grad_c, slot_w = grad_c.reshape(-1, dim), validf.reshape(-1)
    if bags is None:
        _add_rows(syn0, flat_ctx, grad_c, cap, slot_w, curv_c)
    else:
        rows, grad_r, weight_r, curv_r = bags.row_updates(grad_c, slot_w, curv_c)
        _add_rows(syn0, rows, grad_r, cap, weight_r, curv_r)
    return loss, validf.sum(dtype=torch.float64)


def _cbow_step(syn0, syn1neg, part, labels, bags, cap, bound):
    ctx, validf = part["ctx"], part["validf"]
    out_ids, out_keep, lr = part["out_ids"], part["out_keep"], part["lr"]
    b, m = ctx.shape
    k1 = out_ids.shape[1]
    dim = syn0.shape[1]
    flat_ctx = ctx.reshape(-1)
    if bags is None:
        rows = syn0.index_select(0, flat_ctx).view(b, m, dim)
        h = torch.bmm(validf[:, None, :], rows).squeeze(1)
        count = validf.sum(1)
    else:  # the input is the mean of all bag rows of the context words (fastText)
        inv = bags.inv.reshape(-1)
        h = bags.sums(syn0).index_select(0, inv).view(b, m, dim).sum(1)
        count = bags.counts.index_select(0, inv).view(b, m).sum(1).to(syn0.dtype)
    has = (count > 0).to(syn0.dtype)
    h = h / count.clamp(min=1)[:, None]
    weight = out_keep * has[:, None]
    outv = syn1neg.index_select(0, out_ids.reshape(-1)).view(b, k1, dim)
    f = torch.bmm(outv, h[:, :, None]).squeeze(2)  # (b, K + 1)
    loss, g, _ = _scores_to_grad(f, labels, weight, lr[:, None])
    grad_h = torch.bmm(g[:, None, :], outv).squeeze(1)  # (b, dim)
    grad_o = g[:, :, None] * h[:, None, :]
    _add_rows(syn1neg, out_ids.reshape(-1), grad_o.reshape(-1, dim), cap, weight.reshape(-1))
    # the error goes in full to every context row (masked slots add zero)
    grad_ctx = (grad_h[:, None, :] * validf[:, :, None]).reshape(-1, dim)
    if bags is None:
        _add_rows(syn0, flat_ctx, grad_ctx, cap, validf.reshape(-1))
    else:
        rows, grad_r, weight_r, _ = bags.row_updates(grad_ctx, validf.reshape(-1))
        _add_rows(syn0, rows, grad_r, cap, weight_r)
    return loss, has.sum(dtype=torch.float64)
