"""Write a large, realistic noisy training log with a failure at the end.

The noise is what 8-rank training logs are made of: step and loss lines, tqdm progress bars with
carriage returns, NCCL INFO lines, UserWarnings, dataloader and checkpoint messages, vLLM-style
INFO lines with prefixes. The end holds one rank's CUDA OOM traceback followed by NCCL watchdog
timeouts on the others and torchrun's ChildFailedError summary.

usage: python bench/generate_log.py OUT.log [--size-mb 1024] [--seed 0]
"""

from __future__ import annotations

import argparse
import random

NOISE = [
    "[rank{r}]:[I{md} {hms}.{us} {pid} ProcessGroupNCCL.cpp:{n}] [PG ID 0 PG GUID 0 Rank {r}] ProcessGroupNCCL initialization options: size: 8, global rank: {r}",
    "node-{r}:{pid}:{pid2} [{r}] NCCL INFO Channel {c:02d}/0 : {r}[{r}] -> {r2}[{r2}] via P2P/CUMEM/read",
    "node-{r}:{pid}:{pid2} [{r}] NCCL INFO comm 0x{h} rank {r} nRanks 8 nNodes 1 localRanks 8 localRank {r} MNNVL 0",
    "{{'loss': {loss:.4f}, 'grad_norm': {gn:.3f}, 'learning_rate': {lr:.2e}, 'epoch': {ep:.2f}}}",
    "[rank{r}]: step {step} | loss {loss:.4f} | lr {lr:.3e} | tokens/s {tps} | mem {mem:.1f} GiB",
    " {p:3d}%|{bar:<20}| {step}/{total} [{m:02d}:{s:02d}<{m2:02d}:{s2:02d}, {it:.2f}it/s]\r",
    "/usr/local/lib/python3.11/site-packages/torch/utils/checkpoint.py:{n}: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
    "2026-11-2{d}T{hms}.{us}Z INFO dataloader: worker {w} prefetched {n} samples from shard {h}",
    "(EngineCore pid={pid}) INFO {mo:02d}-{dd:02d} {hms} [loggers.py:{n}] Engine 000: Avg prompt throughput: {tps}.0 tokens/s, Avg generation throughput: {gen}.1 tokens/s, Running: {w} reqs, Waiting: 0 reqs, GPU KV cache usage: {p}.0%",
    "[{ts}] [INFO] [checkpointing.py:{n}] Saved checkpoint to /checkpoints/step_{step}/model_{r}.pt in {lr:.2f}s",
    "WARNING:root:Tokenizer pad token not set; using eos token id {n} for padding in batch {step}",
]

FAILURE = """[rank3]:Traceback (most recent call last):
[rank3]:  File "/workspace/train.py", line 412, in <module>
[rank3]:    main()
[rank3]:  File "/workspace/train.py", line 388, in main
[rank3]:    loss.backward()
[rank3]:  File "/usr/local/lib/python3.11/site-packages/torch/autograd/__init__.py", line 347, in backward
[rank3]:    _engine_run_backward(
[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 3 has a total capacity of 79.10 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in use. Of the allocated memory 71.02 GiB is allocated by PyTorch, and 5.11 GiB is reserved by PyTorch but unallocated.
[rank0]:[E1129 10:40:12.553921000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.
[rank1]:[E1129 10:40:12.553933000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_10:40:15
  host      : node-0
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 41233)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""


def noise_block(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        tpl = rng.choice(NOISE)
        r = rng.randrange(8)
        step = rng.randrange(1, 200000)
        out.append(tpl.format(
            r=r, r2=(r + 1) % 8, pid=rng.randrange(1000, 99999), pid2=rng.randrange(1000, 99999),
            md=f"11{rng.randrange(10, 29)}", hms=f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}",
            us=rng.randrange(10**6), n=rng.randrange(1, 3000), c=rng.randrange(32), h=f"{rng.getrandbits(40):x}",
            loss=rng.random() * 4, gn=rng.random() * 10, lr=rng.random() * 1e-3, ep=rng.random() * 3,
            step=step, tps=rng.randrange(1000, 90000), mem=rng.random() * 80, p=rng.randrange(101),
            bar="#" * rng.randrange(21), total=200000, m=rng.randrange(60), s=rng.randrange(60),
            m2=rng.randrange(60), s2=rng.randrange(60), it=rng.random() * 9, d=rng.randrange(10),
            w=rng.randrange(16), mo=rng.randrange(1, 13), dd=rng.randrange(1, 29), gen=rng.randrange(9000),
            ts=f"2026-11-29 {rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d},{rng.randrange(1000):03d}",
        ))
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    # 64 distinct blocks of ~1 MB, written in a shuffled order: varied, yet fast to produce
    blocks = [noise_block(rng, 7000).encode() for _ in range(64)]
    target = args.size_mb << 20
    written = 0
    with open(args.out, "wb") as fh:
        while written < target:
            block = blocks[rng.randrange(len(blocks))]
            fh.write(block)
            written += len(block)
        fh.write(FAILURE.encode())
    print(f"wrote {args.out}: {written + len(FAILURE)} bytes")


if __name__ == "__main__":
    main()
