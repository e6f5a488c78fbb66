"""Export convolutional networks from torch to ONNX, with ONNX Runtime
reference outputs, for tests/test_cnn_models.py and benchmarks/bench_cnn.py.

    python3 tests/models/make_cnn_models.py --out DIR [--only NAME ...]
                                            [--exporters torchscript dynamo] [--size tiny|bench]

torchvision does not import beside the installed torch, so the
architectures are written out here in plain torch, as torchvision has them:

- ``resnet18``: ResNet-18 (7x7 stem, max pool, 4 stages of 2 BasicBlocks,
  64-512 channels, global average pool, 1000-way classifier);
- ``mobilenetv2``: MobileNetV2 (width 1.0: 17 inverted residual blocks with
  depthwise 3x3 convolutions and ReLU6, 1280-channel head, classifier);
- ``yolo``: a small YOLO-style detector (Conv-BN-SiLU backbone to stride 32
  with a C2f split-and-concatenate block, an SPPF block of chained 5x5 max pools, a neck that upsamples by 2
  (nearest) and concatenates, detection convolutions at strides 16 and 32
  reshaped to [B, anchors, H, W, 5 + classes] with a sigmoid);
- ``segnet``: a small encoder-decoder with what the others lack: a depthwise
  5x5 convolution, PReLU, HardSwish, an average pool, PixelUnshuffle /
  PixelShuffle (SpaceToDepth / DepthToSpace), ConvTranspose (stride 2),
  bilinear Resize (align_corners False and True), a nearest Resize to
  another tensor's size (Shape -> Slice -> Concat -> sizes) and a Slice of
  channels.

Random weights (torch.manual_seed fixed per model), eval mode, and every
BatchNorm given random running statistics, scale and shift (so the BN fold
has something to fold).  Each model is exported twice where the exporter
manages it:

- ``torchscript``: torch.onnx.export(..., dynamo=False), opset 17;
- ``dynamo``: torch.onnx.export(..., dynamo=True), opset 18 (needs
  ``onnxscript``);
- ``torchscript-nofold``: the TorchScript exporter with
  do_constant_folding=False.  Both exporters above fold each BatchNorm into
  the convolution before it themselves (and the TorchScript one pre-computes
  other constants); this one keeps every BatchNormalization node, so that
  the engine's own BatchNorm fold is what the tests check.

Batch, height and width are dynamic.  For each model and exporter the
script writes ``DIR/<name>-<exporter>.onnx`` and, with references,
``DIR/<name>-<exporter>.npz``: for the 3 input sets (``SHAPE_SETS``: batch 1
at 64x64, batch 3 at 64x64, batch 2 at 64x96 - small, so the tests stay
fast) the input (``set<k>.in.<name>``) and ONNX Runtime's outputs
(``set<k>.out.<name>``), ORT_DISABLE_ALL (the graph computed op by op as the
file says).  ``DIR/manifest.json`` records per model and exporter whether it
exported (the reason when not), the input and output names, the largest
relative difference between ORT and torch per set (a check of the exporter,
not of Peregrine) and the times.

``--size bench``: the same exports with the benchmark's input sets
(224x224, batch 1 and 8) recorded in the manifest and no references
(``--refs`` to write them anyway).

The module imports without torch: MODELS, EXPORTERS, SHAPE_SETS and
SHAPE_IDS are plain data the tests parametrise over.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np

EXPORTERS = ("torchscript", "dynamo", "torchscript-nofold")
OPSET = {"torchscript": 17, "dynamo": 18, "torchscript-nofold": 17}
MODELS = ("resnet18", "mobilenetv2", "yolo", "segnet")
# (batch, height, width); every model takes multiples of 32
SHAPE_SETS = {"tiny": [(1, 64, 64), (3, 64, 64), (2, 64, 96)],
              "bench": [(1, 224, 224), (8, 224, 224)]}
SHAPE_IDS = ["b1-64x64", "b3-64x64", "b2-64x96"]
INPUT = "image"


def file_stem(name: str, exporter: str) -> str:
    return f"{name}-{exporter}"


# ---------------------------------------------------------------------------
# the architectures
# ---------------------------------------------------------------------------

def _nn():
    import torch
    from torch import nn
    import torch.nn.functional as F
    return torch, nn, F


def conv_bn(nn, cin, cout, k=3, s=1, groups=1, act="relu"):
    layers = [nn.Conv2d(cin, cout, k, s, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act == "relu":
        layers.append(nn.ReLU(inplace=True))
    elif act == "relu6":
        layers.append(nn.ReLU6(inplace=True))
    elif act == "silu":
        layers.append(nn.SiLU(inplace=True))
    elif act == "hardswish":
        layers.append(nn.Hardswish())
    return nn.Sequential(*layers)


def resnet18():
    torch, nn, F = _nn()

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(y)) + idt)

    class ResNet18(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))

    return ResNet18()


def mobilenetv2():
    torch, nn, F = _nn()

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hid = cin * expand
            layers = [] if expand == 1 else [conv_bn(nn, cin, hid, 1, act="relu6")]
            layers += [conv_bn(nn, hid, hid, 3, stride, groups=hid, act="relu6"),
                       conv_bn(nn, hid, cout, 1, act=None)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    class MobileNetV2(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            layers, cin = [conv_bn(nn, 3, 32, 3, 2, act="relu6")], 32
            for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                               (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers.append(conv_bn(nn, cin, 1280, 1, act="relu6"))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

        def forward(self, x):
            x = F.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))

    return MobileNetV2()


def yolo():
    torch, nn, F = _nn()

    class SPPF(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1 = conv_bn(nn, c, c // 2, 1, act="silu")
            self.cv2 = conv_bn(nn, c * 2, c, 1, act="silu")
            self.m = nn.MaxPool2d(5, 1, 2)

        def forward(self, x):
            x = self.cv1(x)
            y1 = self.m(x)
            y2 = self.m(y1)
            return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))

    class C2f(nn.Module):
        """YOLOv8's split-and-concatenate block: torch.chunk exports as Split."""
        def __init__(self, c):
            super().__init__()
            self.cv1 = conv_bn(nn, c, c, 1, act="silu")
            self.m = nn.Sequential(conv_bn(nn, c // 2, c // 2, 3, act="silu"),
                                   conv_bn(nn, c // 2, c // 2, 3, act="silu"))
            self.cv2 = conv_bn(nn, c + c // 2, c, 1, act="silu")

        def forward(self, x):
            a, b = self.cv1(x).chunk(2, 1)
            return self.cv2(torch.cat([a, b, b + self.m(b)], 1))

    class Detect(nn.Module):
        def __init__(self, cin, anchors=3, classes=8):
            super().__init__()
            self.na, self.no = anchors, classes + 5
            self.conv = nn.Conv2d(cin, anchors * self.no, 1)

        def forward(self, x):
            b, _, h, w = x.shape
            y = self.conv(x).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
            return torch.sigmoid(y)

    class TinyYolo(nn.Module):
        def __init__(self):
            super().__init__()
            self.b1 = nn.Sequential(conv_bn(nn, 3, 16, 3, 2, act="silu"), conv_bn(nn, 16, 32, 3, 2, act="silu"),
                                    conv_bn(nn, 32, 32, 3, 1, act="silu"), conv_bn(nn, 32, 64, 3, 2, act="silu"),
                                    C2f(64))                                               # stride 8
            self.b2 = nn.Sequential(conv_bn(nn, 64, 128, 3, 2, act="silu"),
                                    conv_bn(nn, 128, 128, 3, 1, act="silu"))               # stride 16
            self.b3 = nn.Sequential(conv_bn(nn, 128, 256, 3, 2, act="silu"), SPPF(256))     # stride 32
            self.lat = conv_bn(nn, 256, 128, 1, act="silu")
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.fuse = conv_bn(nn, 256, 128, 3, 1, act="silu")
            self.down = conv_bn(nn, 128, 128, 3, 2, act="silu")
            self.fuse2 = conv_bn(nn, 256, 256, 3, 1, act="silu")
            self.det16, self.det32 = Detect(128), Detect(256)

        def forward(self, x):
            p3 = self.b1(x)
            p4 = self.b2(p3)
            p5 = self.b3(p4)
            l5 = self.lat(p5)
            n4 = self.fuse(torch.cat([self.up(l5), p4], 1))
            n5 = self.fuse2(torch.cat([self.down(n4), l5], 1))
            return self.det16(n4), self.det32(n5)

    return TinyYolo()


def segnet():
    torch, nn, F = _nn()

    class SegNet(nn.Module):
        def __init__(self, classes=5):
            super().__init__()
            self.stem = conv_bn(nn, 3, 16, 3, 2, act="hardswish")                  # /2
            self.unshuffle = nn.PixelUnshuffle(2)                                    # /4, 64 ch
            self.dw5 = conv_bn(nn, 64, 64, 5, 1, groups=64, act=None)               # depthwise 5x5
            self.prelu = nn.PReLU(64)
            self.pw = conv_bn(nn, 64, 96, 1, act="relu")
            self.pool = nn.AvgPool2d(3, 2, 1, count_include_pad=False)             # /8
            self.mid = nn.Sequential(nn.Conv2d(96, 96, 3, 1, 2, dilation=2), nn.BatchNorm2d(96), nn.ReLU())
            self.deconv = nn.ConvTranspose2d(96, 64, 4, 2, 1)                       # /4
            self.bn_up = nn.BatchNorm2d(64)
            self.shuffle_conv = nn.Conv2d(128, 64, 3, 1, 1)
            self.shuffle = nn.PixelShuffle(2)                                        # /2, 16 ch
            self.head = nn.Conv2d(32, classes, 1)

        def forward(self, x):
            s = self.stem(x)
            e = self.prelu(self.dw5(self.unshuffle(s)))
            m = self.mid(self.pool(self.pw(e)))
            u = F.relu(self.bn_up(self.deconv(m)))
            u2 = F.interpolate(m, scale_factor=2.0, mode="bilinear", align_corners=True)[:, :64]
            d = self.shuffle(self.shuffle_conv(torch.cat([u + e, u2], 1)))
            d = torch.cat([d, F.interpolate(e[:, :16], size=d.shape[2:], mode="nearest")], 1)
            y = self.head(d)
            return F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)

    return SegNet()


BUILDERS = {"resnet18": resnet18, "mobilenetv2": mobilenetv2, "yolo": yolo, "segnet": segnet}
OUTPUTS = {"resnet18": ["logits"], "mobilenetv2": ["logits"], "yolo": ["det16", "det32"],
           "segnet": ["mask"]}


def randomise_batchnorm(module, gen) -> None:
    """Random running statistics, scale and shift in every BatchNorm (a
    fresh one has mean 0, var 1, scale 1, shift 0: its fold would be a
    no-op and hide a wrong fold)."""
    import torch
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.2)
                m.running_var.copy_(torch.rand(c, generator=gen) * 1.0 + 0.5)
                m.weight.copy_(torch.rand(c, generator=gen) * 1.0 + 0.5)
                m.bias.copy_(torch.randn(c, generator=gen) * 0.2)


def build(name: str):
    import torch
    seed = 4321 + MODELS.index(name)
    torch.manual_seed(seed)
    m = BUILDERS[name]()
    randomise_batchnorm(m, torch.Generator().manual_seed(seed))
    m.eval()
    return m, [INPUT], list(OUTPUTS[name]), seed


def make_inputs(shape, seed: int, k: int) -> dict:
    b, h, w = shape
    rng = np.random.default_rng(seed * 10 + k)
    return {INPUT: rng.standard_normal((b, 3, h, w)).astype(np.float32)}


# ---------------------------------------------------------------------------
# export and references
# ---------------------------------------------------------------------------

def export(module, ins, outs, sample: dict, path: str, exporter: str) -> None:
    import torch
    args = tuple(torch.from_numpy(sample[n]) for n in ins)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter.startswith("torchscript"):
            axes = {n: {0: "batch", 2: "height", 3: "width"} for n in ins}
            torch.onnx.export(module, args, path, input_names=ins, output_names=outs, dynamic_axes=axes,
                              opset_version=OPSET[exporter], dynamo=False,
                              do_constant_folding=exporter == "torchscript")
        else:
            try:
                import onnxscript  # noqa: F401
            except ImportError:
                raise RuntimeError("the dynamo exporter needs the `onnxscript` package (pip install onnxscript)")
            from torch.export import Dim
            # every model downsamples by 32: height and width are multiples of it
            h32, w32 = Dim("h32", min=1, max=64), Dim("w32", min=1, max=64)
            shapes = tuple({0: Dim("batch", min=1, max=1024), 2: 32 * h32, 3: 32 * w32} for _ in ins)
            prog = torch.onnx.export(module, args, None, input_names=ins, output_names=outs,
                                     dynamic_shapes=shapes, opset_version=OPSET[exporter], dynamo=True,
                                     external_data=False, optimize=True, verbose=False, report=False)
            prog.save(path, external_data=False)


def ort_session(path: str, optimized: bool = False, threads: int = 1):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized
                                   else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _reason(e: BaseException) -> str:
    msg = str(e).strip()
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if ln.startswith("## Exception summary") and i + 1 < len(lines):
            return lines[i + 1][:500]
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:500]


def make_one(name: str, exporter: str, out: str, size: str, refs: bool, log) -> dict:
    import torch
    entry: dict = {"model": name, "exporter": exporter, "opset": OPSET[exporter], "size": size,
                   "file": file_stem(name, exporter) + ".onnx"}
    t0 = time.perf_counter()
    module, ins, outs, seed = build(name)
    entry["inputs"], entry["outputs"] = ins, outs
    sets = [make_inputs(s, seed, k) for k, s in enumerate(SHAPE_SETS[size])]
    path = os.path.join(out, entry["file"])
    try:
        # traced with batch 3 (tiny) / 8 (bench): a dim of size 1 would be specialised
        export(module, ins, outs, sets[1], path, exporter)
    except Exception as e:
        entry["exported"] = False
        entry["reason"] = _reason(e)
        entry["traceback"] = traceback.format_exc()[-3000:]
        if os.path.exists(path):
            os.remove(path)
        log(f"{name:>12} {exporter:<11} export FAILED: {entry['reason']}")
        return entry
    entry["exported"] = True
    entry["bytes"] = os.path.getsize(path)
    entry["export_s"] = round(time.perf_counter() - t0, 2)
    if refs:
        arrays, entry["torch_vs_ort"] = {}, []
        try:
            sess = ort_session(path)
            onnx_outs = [o.name for o in sess.get_outputs()]
            if onnx_outs != outs:
                raise RuntimeError(f"the file's outputs are {onnx_outs}, expected {outs}")
            for k, feeds in enumerate(sets):
                res = sess.run(None, feeds)
                with torch.no_grad():
                    ref = module(*[torch.from_numpy(feeds[n]) for n in ins])
                ref = ref if isinstance(ref, (tuple, list)) else (ref,)
                entry["torch_vs_ort"].append(max(
                    float(np.abs(r - t.numpy()).max() / max(np.abs(t.numpy()).max(), 1e-6))
                    for r, t in zip(res, ref)))
                for n, a in feeds.items():
                    arrays[f"set{k}.in.{n}"] = a
                for n, a in zip(onnx_outs, res):
                    arrays[f"set{k}.out.{n}"] = a
            np.savez_compressed(os.path.join(out, file_stem(name, exporter) + ".npz"), **arrays)
            entry["refs"] = True
        except Exception as e:
            entry["refs"] = False
            entry["reason"] = f"ORT cannot run the export: {type(e).__name__}: {str(e).strip()[:400]}"
            log(f"{name:>12} {exporter:<11} {entry['reason']}")
            return entry
    entry["s"] = round(time.perf_counter() - t0, 2)
    log(f"{name:>12} {exporter:<11} {entry['bytes'] / 1e6:6.1f} MB  opset {entry['opset']}  "
        + (f"torch vs ORT {max(entry['torch_vs_ort']):.1e}  " if refs else "") + f"{entry['s']:.1f} s")
    return entry


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the .onnx / .npz files and manifest.json")
    ap.add_argument("--only", nargs="+", choices=MODELS, help="only these models")
    ap.add_argument("--exporters", nargs="+", choices=EXPORTERS, default=list(EXPORTERS))
    ap.add_argument("--size", choices=sorted(SHAPE_SETS), default="tiny")
    ap.add_argument("--refs", action="store_true", help="write ORT references at --size bench too")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    refs = args.size == "tiny" or args.refs

    import torch
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    import logging
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    os.makedirs(args.out, exist_ok=True)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
    versions = {"torch": torch.__version__}
    for mod in ("onnx", "onnxruntime", "onnxscript"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = None
    log("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    manifest_path = os.path.join(args.out, "manifest.json")
    entries = {}
    if os.path.exists(manifest_path):      # --only adds to (replaces in) an existing manifest
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("size") == args.size:
            entries = {f"{e['model']}-{e['exporter']}": e for e in old["models"]}
    t0 = time.perf_counter()
    for name in (args.only or MODELS):
        for exporter in args.exporters:
            entries[f"{name}-{exporter}"] = make_one(name, exporter, args.out, args.size, refs, log)
    manifest = {"size": args.size, "versions": versions, "refs": refs, "input": INPUT,
                "shape_sets": SHAPE_SETS[args.size], "models": list(entries.values())}
    if args.size == "tiny":
        manifest["shape_ids"] = SHAPE_IDS
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    n_ok = sum(e["exported"] for e in entries.values())
    log(f"{n_ok}/{len(entries)} exported in {time.perf_counter() - t0:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
