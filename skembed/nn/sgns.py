"""Device-resident word2vec trainer: skip-gram / CBOW with negative sampling, batched on a GPU.

torch only (no scikit-learn, no numba). :func:`train_sgns_chunk` trains on one
corpus chunk whose (already subsampled, vocabulary-remapped) token ids live on
the device. Everything a step needs is made on the device from the ids: the
positions of a batch of centre words, word2vec's dynamic window (an effective
window drawn uniformly in ``1..window`` per centre), the context words inside
it that stay in the centre's document, and the negatives (Walker's alias
table). Nothing returns to the host between batches except, with subword
input, the number of bag rows of each batch (one integer).

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
of 64 to 256). ``update_cap`` bounds it: a row that receives
``n > update_cap`` updates in a batch (windows for an output row, examples for
an input row) gets their sum scaled by ``update_cap / n``, i.e. ``update_cap``
steps along their mean. Rows below the cap, which is nearly all of them, get
word2vec's update unchanged. Measured on debdocs (``docs/gpu.md``): skip-gram
at 8,192 centres and a cap of 64 is within 0.02 of the CPU kernel on
WordSim-353 and 0.03 below it on SimLex-999; CBOW is within 0.003 on both at
65,536 centres. (A cap on the summed logistic curvature instead of the count
was tried and measured worse: CBOW WordSim-353 0.447 against 0.535.)

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

import torch
from torch.nn import functional as F

__all__ = [
    "DEFAULT_BATCH_WORDS",
    "DEFAULT_UPDATE_CAP",
    "SubwordBags",
    "device_tables",
    "train_sgns_chunk",
]

#: centre words per step by default, skip-gram and CBOW (measured on debdocs, docs/gpu.md)
DEFAULT_BATCH_WORDS = {True: 8192, False: 65536}
#: most updates a row takes at full weight in one batch (see the module notes)
DEFAULT_UPDATE_CAP = 64.0


class SubwordBags:
    """The CSR of each word's input rows, on the device (fastText subword input).

    Parameters
    ----------
    sub_indptr : array-like of shape (n_words + 1,), int64
        Word ``u``'s rows are ``sub_indices[sub_indptr[u]:sub_indptr[u + 1]]``.
    sub_indices : array-like of shape (nnz,), int32 or int64
        Rows of ``syn0`` (the word's own row, then its n-gram bucket rows).
    device : str or torch.device

    Attributes
    ----------
    indptr : torch.Tensor of shape (n_words + 1,), int64
    indices : torch.Tensor of shape (nnz,), int64
    lengths : torch.Tensor of shape (n_words,), int64
        Rows per word.
    """

    def __init__(self, sub_indptr, sub_indices, device):
        self.indptr = torch.as_tensor(sub_indptr, device=device).to(torch.int64)
        self.indices = torch.as_tensor(sub_indices, device=device).to(torch.int64)
        self.lengths = self.indptr[1:] - self.indptr[:-1]

    def rows(self, words, mask):
        """Flatten the bags of ``words`` (one host sync: the number of rows).

        Parameters
        ----------
        words : torch.Tensor of shape (M,), int64
        mask : torch.Tensor of shape (M,), bool
            Slots that take part; a masked slot has an empty bag.

        Returns
        -------
        rows : torch.Tensor of shape (R,), int64
            Rows of ``syn0``, bag after bag.
        owner : torch.Tensor of shape (R,), int64
            Slot (index into ``words``) of each row.
        counts : torch.Tensor of shape (M,), int64
            Bag sizes (0 for masked slots).
        """
        counts = self.lengths[words] * mask
        total = int(counts.sum())  # the one host round trip of a subword batch
        m = words.shape[0]
        owner = torch.repeat_interleave(
            torch.arange(m, device=words.device), counts, output_size=total
        )
        first = torch.cumsum(counts, 0) - counts
        pos = torch.arange(total, device=words.device) - first[owner]
        rows = self.indices[self.indptr[words][owner] + pos]
        return rows, owner, counts


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


def _input_vectors(syn0, words, mask, bags):
    """Input vectors of the slots ``words`` (M,): rows, or means of subword bags."""
    if bags is None:
        return syn0.index_select(0, words), None
    rows, owner, counts = bags.rows(words, mask)
    sums = torch.zeros(words.shape[0], syn0.shape[1], dtype=syn0.dtype, device=syn0.device)
    sums.index_add_(0, owner, syn0.index_select(0, rows))
    return sums / counts.clamp(min=1).unsqueeze(1).to(syn0.dtype), (rows, owner)


def _cap_scale(index, weight, n_rows, cap):
    """Per-entry factor ``min(1, cap / n_row)``, ``n_row`` the summed ``weight`` of the entry's row."""
    counts = torch.zeros(n_rows, dtype=weight.dtype, device=weight.device)
    counts.index_add_(0, index, weight)
    return (cap / counts.clamp(min=cap)).index_select(0, index)


def _add_rows(mat, index, grad, cap, weight=None):
    """``mat[index] += grad`` summed per row, each row's sum capped at ``cap`` updates."""
    if cap is not None:
        w = torch.ones_like(index, dtype=grad.dtype) if weight is None else weight
        grad = grad * _cap_scale(index, w, mat.shape[0], float(cap))[:, None]
    mat.index_add_(0, index, grad)


def _add_input_grad(syn0, words, mask, grad, bag_rows, cap):
    """Add ``grad`` (M, dim) to the input rows of the slots (in full to every bag row)."""
    if bag_rows is None:
        _add_rows(syn0, words, grad, cap, mask)
    else:
        rows, owner = bag_rows
        _add_rows(syn0, rows, grad.index_select(0, owner), cap)


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
        Centre positions per step; ``None``: ``DEFAULT_BATCH_WORDS[sg]``
        (8,192 for skip-gram, 65,536 for CBOW). Larger is faster on a GPU
        (fewer launches; a step costs ~40 kernel launches, so small batches
        are bound by the host) and makes frequent rows' summed updates staler
        (see the module notes and ``docs/gpu.md``).
    update_cap : float or None, default=DEFAULT_UPDATE_CAP
        A row updated ``n > update_cap`` times in one batch gets the sum of
        its updates scaled by ``update_cap / n`` (see the module notes);
        ``None`` disables it (plain summed updates; stable only for small
        batches).

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
        batch_words = DEFAULT_BATCH_WORDS[bool(sg)]
    window, negative, batch_words = int(window), int(negative), int(batch_words)
    if window < 1 or negative < 1 or batch_words < 1:
        raise ValueError(
            f"window, negative and batch_words must be >= 1, got {window}, {negative}, "
            f"{batch_words}."
        )
    dev = syn0.device
    if syn1neg.device != dev:
        raise ValueError(
            f"syn1neg is on {syn1neg.device} but syn0 on {dev}; move both to one device."
        )
    ids = torch.as_tensor(ids).to(device=dev, dtype=torch.int64, non_blocking=True)
    offsets = torch.as_tensor(offsets).to(device=dev, dtype=torch.int64, non_blocking=True)
    prob, alias = device_tables(neg_prob, neg_alias, dev)
    n_tok = ids.shape[0]
    loss = torch.zeros((), dtype=torch.float64, device=dev)
    n_examples = torch.zeros((), dtype=torch.float64, device=dev)
    if n_tok == 0:
        return loss, n_examples
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed) & 0x7FFF_FFFF_FFFF_FFFF)
    labels = torch.zeros(negative + 1, dtype=syn0.dtype, device=dev)
    labels[0] = 1.0
    step = (float(alpha_end) - float(alpha_start)) / max(n_tok, 1)
    # everything random or positional is drawn for a block of batches at once, so a
    # step is only gathers, three matrix products and two index_add_ (fewer launches)
    block = max(batch_words, (_BLOCK_CENTRES // batch_words) * batch_words)
    for b0 in range(0, n_tok, block):
        plan = _plan_block(ids, offsets, b0, min(b0 + block, n_tok), window, negative, prob,
                           alias, gen, float(alpha_start), step, syn0.dtype)  # fmt: skip
        for s0 in range(0, plan["n"], batch_words):
            part = {k: v[s0 : s0 + batch_words] for k, v in plan.items() if k != "n"}
            fn = _skipgram_step if sg else _cbow_step
            loss_b, n_b = fn(syn0, syn1neg, part, labels, subwords, update_cap)
            loss += loss_b
            n_examples += n_b
    return loss, n_examples


#: centres whose windows and negatives are drawn at once (bounds the plan's memory:
#: about (2 * window + negative) * 12 bytes per centre)
_BLOCK_CENTRES = 1 << 20


def _plan_block(ids, offsets, start, stop, window, negative, prob, alias, gen, a0, step, dtype):
    """Contexts, their mask, negatives and learning rates of the centres ``start .. stop - 1``."""
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
    negs = _draw_negatives(prob, alias, (n, negative), gen)
    out_ids = torch.cat([centre[:, None], negs], dim=1)  # (n, K + 1)
    out_keep = torch.ones(out_ids.shape, dtype=dtype, device=dev)
    out_keep[:, 1:] = (negs != centre[:, None]).to(dtype)
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
    """Loss and ``(label - sigmoid(f)) * lr * weight`` of binary logistic examples."""
    sign = labels * 2 - 1
    loss = -(F.logsigmoid(sign * f) * weight).sum(dtype=torch.float64)
    g = (labels - torch.sigmoid(f)) * weight * lr
    return loss, g


def _skipgram_step(syn0, syn1neg, part, labels, bags, cap):
    ctx, valid, validf = part["ctx"], part["valid"], part["validf"]
    out_ids, out_keep, lr = part["out_ids"], part["out_keep"], part["lr"]
    b, m = ctx.shape
    k1 = out_ids.shape[1]
    dim = syn0.shape[1]
    flat_ctx = ctx.reshape(-1)
    flat_out = out_ids.reshape(-1)
    C, bag_rows = _input_vectors(syn0, flat_ctx, valid.reshape(-1), bags)
    C = C.view(b, m, dim)
    outv = syn1neg.index_select(0, flat_out).view(b, k1, dim)
    f = torch.bmm(C, outv.transpose(1, 2))  # (b, m, K + 1)
    weight = validf[:, :, None] * out_keep[:, None, :]
    loss, g = _scores_to_grad(f, labels, weight, lr[:, None, None])
    grad_c = torch.bmm(g, outv)  # (b, m, dim)
    grad_o = torch.bmm(g.transpose(1, 2), C)  # (b, K + 1, dim)
    # an output row counts once per window that uses it
    used = out_keep * (validf.sum(1, keepdim=True) > 0).to(syn0.dtype)
    _add_rows(syn1neg, flat_out, grad_o.reshape(-1, dim), cap, used.reshape(-1))
    _add_input_grad(syn0, flat_ctx, validf.reshape(-1), grad_c.reshape(-1, dim), bag_rows, cap)
    return loss, validf.sum(dtype=torch.float64)


def _cbow_step(syn0, syn1neg, part, labels, bags, cap):
    ctx, valid, validf = part["ctx"], part["valid"], part["validf"]
    out_ids, out_keep, lr = part["out_ids"], part["out_keep"], part["lr"]
    b, m = ctx.shape
    k1 = out_ids.shape[1]
    dim = syn0.shape[1]
    flat_ctx = ctx.reshape(-1)
    if bags is None:
        rows = syn0.index_select(0, flat_ctx).view(b, m, dim)
        h = torch.bmm(validf[:, None, :], rows).squeeze(1)
        count = validf.sum(1)
        bag_rows = None
    else:
        rows, owner, counts = bags.rows(flat_ctx, valid.reshape(-1))
        centre_of = owner // m
        h = torch.zeros(b, dim, dtype=syn0.dtype, device=syn0.device)
        h.index_add_(0, centre_of, syn0.index_select(0, rows))
        count = counts.view(b, m).sum(1).to(syn0.dtype)
        bag_rows = (rows, centre_of)
    has = (count > 0).to(syn0.dtype)
    h = h / count.clamp(min=1)[:, None]
    weight = out_keep * has[:, None]
    outv = syn1neg.index_select(0, out_ids.reshape(-1)).view(b, k1, dim)
    f = torch.bmm(outv, h[:, :, None]).squeeze(2)  # (b, K + 1)
    loss, g = _scores_to_grad(f, labels, weight, lr[:, None])
    grad_h = torch.bmm(g[:, None, :], outv).squeeze(1)  # (b, dim)
    grad_o = g[:, :, None] * h[:, None, :]
    _add_rows(syn1neg, out_ids.reshape(-1), grad_o.reshape(-1, dim), cap, weight.reshape(-1))
    if bag_rows is None:
        # the error goes in full to every context row (masked slots add zero)
        grad_ctx = (grad_h[:, None, :] * validf[:, :, None]).reshape(-1, dim)
        _add_rows(syn0, flat_ctx, grad_ctx, cap, validf.reshape(-1))
    else:
        rows, centre_of = bag_rows
        _add_rows(syn0, rows, grad_h.index_select(0, centre_of), cap)
    return loss, has.sum(dtype=torch.float64)
