#!/usr/bin/env python3
"""Why the residual CNN collapses under SST's objective from scratch (docs/sst.md, issue #49): at
initialisation its argmax f(x) is one class for every input, so the faithfulness term's target
CE(f(x~), argmax f(x)) is a constant class. Replicates salient's image SST models (src/sst/model.cpp:
the MLP 784-128-64 and the residual CNN 16/32/32, weights and biases U(+-1/sqrt(fan_in))) in PyTorch,
untrained, on 2,000 Fashion-MNIST test images, for five seeds; the CNN also with batch normalisation
(as ResNet-18 has). Prints the largest share of images predicted as one class, and the spread of the
logits across inputs relative to the gap between the classes' mean logits.
Usage: python3 scripts/sst_init_check.py  (seconds; Debian's dataset-fashion-mnist, scripts/setup.sh)"""
import gzip

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
raw = gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
images = np.frombuffer(raw, np.uint8, offset=16)[: 2000 * 784].reshape(2000, 784) / 255.0
x = torch.tensor(images, dtype=torch.float32)


def uniform(shape, fan_in):
    bound = fan_in ** -0.5
    return (torch.rand(shape) * 2 - 1) * bound


def mlp(x):
    h = x
    for n_in, n_out in [(784, 128), (128, 64)]:
        h = torch.relu(F.linear(h, uniform((n_out, n_in), n_in), uniform((n_out,), n_in)))
    return F.linear(h, uniform((10, 64), 64), uniform((10,), 64))


def cnn(x, batch_norm=False):
    c = [16, 32, 32]

    def conv(h, n_in, n_out, stride=1):
        h = F.conv2d(h, uniform((n_out, n_in, 3, 3), n_in * 9), uniform((n_out,), n_in * 9), stride=stride, padding=1)
        return F.batch_norm(h, None, None, training=True) if batch_norm else h

    h = torch.relu(conv(x.reshape(-1, 1, 28, 28), 1, c[0]))
    for s in range(3):
        if s > 0:
            h = torch.relu(conv(h, c[s - 1], c[s], 2))
        h = torch.relu(h + conv(torch.relu(conv(h, c[s], c[s])), c[s], c[s]))
    return F.linear(h.mean((2, 3)), uniform((10, c[2]), c[2]), uniform((10,), c[2]))


for name, model in [("mlp", mlp), ("resnet", cnn), ("resnet + batch norm", lambda x: cnn(x, True))]:
    cells = []
    for seed in range(5):
        torch.manual_seed(seed)
        with torch.no_grad():
            z = model(x)
        share = torch.bincount(z.argmax(1), minlength=10).max().item() / len(z)
        means = z.mean(0)
        spread = (z - means).std().item() / (means.max() - means.min()).item()
        cells.append(f"{share:.2f} / {spread:.3f}")
    print(f"{name}: one class's share / input spread over class gap, seeds 0-4: " + ", ".join(cells))
