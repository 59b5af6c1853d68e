"""Loss ops: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss."""
import torch


def _loss_nll(log_prob, target, weight, reduction, ignore_index):
    target = target.to(torch.int64)
    ignore = -(2 ** 62) if ignore_index is None else ignore_index
    safe = torch.where(target == ignore, torch.zeros_like(target), target)
    picked = -torch.gather(log_prob, 1, safe.unsqueeze(1)).squeeze(1)
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(target == ignore, torch.zeros_like(w), w)
    loss = picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def host_negative_log_likelihood_loss(x, target, weight=None, *, reduction="mean", ignore_index=None):
    return _loss_nll(x, target, weight, reduction, ignore_index).to(x.dtype)


def host_softmax_cross_entropy_loss(scores, labels, weights=None, *, reduction="mean", ignore_index=None):
    log_prob = torch.log_softmax(scores.to(torch.float64), dim=1)
    loss = _loss_nll(log_prob, labels, weights.to(torch.float64) if weights is not None else None, reduction,
                     ignore_index)
    return loss.to(scores.dtype), log_prob.to(scores.dtype)
