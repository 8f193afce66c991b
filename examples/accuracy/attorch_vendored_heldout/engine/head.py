"""The classifier head of the engine's encoder on the vendored attorch
layers: a hidden projection, its activation, the logit projection and the
(log-)probabilities over classes, plus the fine-tuning step that trains the
head through the layers' backward. Owns no kernels; the vendored modules are
upstream's, unmodified."""

import torch

import attorch.softmax_layers as normalise
from attorch import act_layers
from attorch.act_layers import GELU as ExactGELU

# The activations a head may be trained with, by the name its config gives.
ACTIVATIONS = {
    "gelu": ExactGELU,
    "relu": act_layers.ReLU,
    "silu": act_layers.SiLU,
    "sigmoid": act_layers.Sigmoid,
    "tanh": act_layers.Tanh,
}


class ClassifierHead:
    """Weights of the head and the activation it was trained with."""

    def __init__(self, w_hidden, w_out, activation: str = "gelu"):
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation: expected one of {', '.join(ACTIVATIONS)}, got {activation!r}")
        self.w_hidden, self.w_out = w_hidden, w_out
        self.act = ACTIVATIONS[activation]()
        self.probabilities = normalise.Softmax(dim=-1)
        self.log_probabilities = normalise.LogSoftmax(dim=-1)

    def __call__(self, features: torch.Tensor, log: bool = False) -> torch.Tensor:
        logits = self.act(features @ self.w_hidden) @ self.w_out
        return self.log_probabilities(logits) if log else self.probabilities(logits)

    def tune_step(self, features: torch.Tensor, labels: torch.Tensor, lr: float) -> float:
        """One SGD step of both projections on the negative log-likelihood."""
        self.w_hidden.requires_grad_(True)
        self.w_out.requires_grad_(True)
        loss = torch.nn.functional.nll_loss(self(features, log=True), labels)
        loss.backward()
        with torch.no_grad():
            for w in (self.w_hidden, self.w_out):
                w -= lr * w.grad
                w.grad = None
        self.w_hidden.requires_grad_(False)
        self.w_out.requires_grad_(False)
        return loss.item()
