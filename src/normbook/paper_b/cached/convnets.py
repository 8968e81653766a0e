"""Paper B's networks (the standard CNN for MNIST, VGG-16 for CIFAR-10) and post-ReLU
activation capture.

Every conv layer is a :class:`ConvBlock` (conv 3x3 pad 1 -> BatchNorm2d or Identity -> ReLU),
named ``conv1``, ``conv2``, ... inside ``model.features``. The no-BN model is the BN model
with BatchNorm replaced by Identity, nothing else changed. Each block owns its own
non-inplace ``nn.ReLU`` so a forward hook on it sees exactly that layer's representation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

# Channels per conv, "M" = max-pool 2 (Simonyan & Zisserman, configuration D).
VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


class ConvBlock(nn.Sequential):
    """conv 3x3 (pad 1) -> BatchNorm2d or Identity -> ReLU."""

    def __init__(self, c_in: int, c_out: int, batchnorm: bool):
        super().__init__(
            OrderedDict(
                conv=nn.Conv2d(c_in, c_out, kernel_size=3, padding=1),
                norm=nn.BatchNorm2d(c_out) if batchnorm else nn.Identity(),
                relu=nn.ReLU(inplace=False),
            )
        )


class _ConvNet(nn.Module):
    features: nn.Sequential
    classifier: nn.Linear

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))

    def conv_layer_names(self) -> list[str]:
        """Names of the conv blocks in forward order (``conv1``, ``conv2``, ...)."""
        return [n for n, m in self.features.named_children() if isinstance(m, ConvBlock)]

    def conv_relus(self) -> OrderedDict[str, nn.ReLU]:
        """Layer name -> the ReLU whose output is that layer's representation."""
        return OrderedDict((n, getattr(self.features, n).relu) for n in self.conv_layer_names())


class StandardCNN(_ConvNet):
    """Nakkiran et al.'s "standard CNN" for 32x32 inputs (MNIST padded to 32x32).

    Widths k, 2k, 4k, 8k; max-pool 2 after convs 2-4, then max-pool 4; Linear(8k -> classes).
    Spatial size 32 -> 32 -> 16 -> 8 -> 4 -> 1.
    """

    def __init__(
        self, width: int = 64, batchnorm: bool = True, in_channels: int = 1, num_classes: int = 10
    ):
        super().__init__()
        k = width
        self.features = nn.Sequential(
            OrderedDict(
                [
                    ("conv1", ConvBlock(in_channels, k, batchnorm)),
                    ("conv2", ConvBlock(k, 2 * k, batchnorm)),
                    ("pool2", nn.MaxPool2d(2)),
                    ("conv3", ConvBlock(2 * k, 4 * k, batchnorm)),
                    ("pool3", nn.MaxPool2d(2)),
                    ("conv4", ConvBlock(4 * k, 8 * k, batchnorm)),
                    ("pool4", nn.MaxPool2d(2)),
                    ("pool_final", nn.MaxPool2d(4)),
                ]
            )
        )
        self.classifier = nn.Linear(8 * k, num_classes)


class VGG16(_ConvNet):
    """VGG-16 for 32x32 inputs: 13 conv blocks, 5 max-pools (32 -> 1), one Linear head.

    ``width_mult`` scales every conv's channels (at least 1) for cheaper profiles.
    """

    def __init__(
        self,
        width_mult: float = 1.0,
        batchnorm: bool = True,
        in_channels: int = 3,
        num_classes: int = 10,
    ):
        super().__init__()
        layers, c_in, i_conv, i_pool = [], in_channels, 0, 0
        for v in VGG16_CFG:
            if v == "M":
                i_pool += 1
                layers.append((f"pool{i_pool}", nn.MaxPool2d(2)))
            else:
                i_conv += 1
                c_out = max(1, int(round(v * width_mult)))
                layers.append((f"conv{i_conv}", ConvBlock(c_in, c_out, batchnorm)))
                c_in = c_out
        self.features = nn.Sequential(OrderedDict(layers))
        self.classifier = nn.Linear(c_in, num_classes)


ARCHITECTURES = {"standard_cnn": StandardCNN, "vgg16": VGG16}


def build(arch: str, *, seed: int, **kwargs) -> _ConvNet:
    """Construct ``arch`` ("standard_cnn" | "vgg16") with weights drawn from ``seed``.

    The global torch RNG state is restored afterwards, so building a model does not shift
    the randomness of whatever runs next.
    """
    if arch not in ARCHITECTURES:
        raise ValueError(f"unknown arch {arch!r}; choose from {sorted(ARCHITECTURES)}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ARCHITECTURES[arch](**kwargs)


def capture_activations(
    model: nn.Module,
    x,
    *,
    batch_size: int = 256,
    layers: Sequence[str] | None = None,
    flatten: bool = False,
    dtype=np.float32,
) -> dict[str, np.ndarray]:
    """Post-ReLU activations of every conv layer: ``{name: array [N, C, H, W]}``.

    Runs ``x`` ([N, C, H, W] tensor or array) in eval mode under ``torch.no_grad()`` in
    batches; ``flatten=True`` returns [N, C*H*W]. ``layers`` picks a subset (activations of
    early VGG layers on thousands of images take gigabytes). The model's train/eval mode is
    restored and all hooks are removed afterwards, also on error.
    """
    relus = (
        model.conv_relus()
        if hasattr(model, "conv_relus")
        else OrderedDict((n, m) for n, m in model.named_modules() if isinstance(m, nn.ReLU))
    )
    names = list(relus) if layers is None else list(layers)
    unknown = [n for n in names if n not in relus]
    if unknown:
        raise KeyError(f"unknown layers {unknown}; available: {list(relus)}")
    x = torch.as_tensor(x)
    device = next(model.parameters()).device
    n = len(x)
    if n == 0:
        raise ValueError("x holds no samples")
    out: dict[str, np.ndarray] = {}
    current: dict[str, torch.Tensor] = {}

    def make_hook(name):
        def hook(_module, _inp, output):
            current[name] = output.detach()

        return hook

    handles = [relus[name].register_forward_hook(make_hook(name)) for name in names]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            for start in range(0, n, batch_size):
                current.clear()
                model(x[start : start + batch_size].to(device=device, dtype=torch.float32))
                for name in names:
                    a = current[name].cpu().numpy()
                    if flatten:
                        a = a.reshape(len(a), -1)
                    if name not in out:  # preallocate: avoids holding every batch twice
                        out[name] = np.empty((n, *a.shape[1:]), dtype=dtype)
                    out[name][start : start + len(a)] = a
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return {name: out[name] for name in names}


def geometry(
    model: nn.Module, in_channels: int, size: int = 32
) -> tuple[dict[str, tuple[int, ...]], int]:
    """The output shape (C, H, W) of every conv layer for one ``size`` x ``size`` input, and
    the model's number of parameters."""
    acts = capture_activations(model, np.zeros((1, in_channels, size, size), np.float32))
    return (
        {name: a.shape[1:] for name, a in acts.items()},
        sum(p.numel() for p in model.parameters()),
    )
