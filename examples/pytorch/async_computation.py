# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Asynchronous computation with PyTorch: the frontend queues, the GPU runs.

You learn that on a GPU a PyTorch call only queues its work and returns at
once, which calls block until the queued work is done (.item(), print,
.cpu()/.numpy(), torch.cuda.synchronize()), and why reading a value back at
every step of a loop costs time. On the CPU eager PyTorch queues nothing; the
script says so. Needs nothing but a CPU; uses the first GPU if there is one.
--size 4000 is slow on a CPU: pass e.g. --size 1000 there.
"""

# %% tags=["setup"]
import io
import time

import torch

import helpers
from helpers import seconds
from common.keys import ASYNC_COMPUTATION
from common.stats import median, speedup

PRODUCTS = 50  # matrix products queued at once, as in auto_parallelism
STEPS = 200  # steps of the small loop in avoid-waits
options, report = helpers.start(__doc__, ASYNC_COMPUTATION)
gpus = helpers.gpus(options.device)
device = gpus[0] if gpus else helpers.cpu()
print(f"device: {helpers.name(device)}; TF32 is off: every product is fp32.")
if device.type == "cpu":
    print("CPU: eager PyTorch runs each operation before the call returns, so nothing is "
          "queued and the blockers below have nothing to wait for.")
report.publish("devices", [helpers.name(device)])
x = helpers.rand(options.size, device)


def work():
    """Queue PRODUCTS independent products of x with itself; return their results."""
    return [x.mm(x) for _ in range(PRODUCTS)]


# %% tags=["queue"]
def queue_then(blocker):
    """Queue the work, then call blocker(ys): medians of (queueing, blocker, both)."""
    queued, waited, total = [], [], []
    for r in range(options.repeats + 1):  # round 0 warms up
        helpers.synchronize([device])
        begin = time.perf_counter()
        ys = work()  # on a GPU: queued, not done
        middle = time.perf_counter()
        blocker(ys)
        end = time.perf_counter()
        helpers.synchronize([device])  # keep ys alive until its work is done
        if r:
            queued.append(middle - begin)
            waited.append(end - middle)
            total.append(end - begin)
    return median(queued), median(waited), median(total)


t_enqueue, _, t_complete = queue_then(lambda ys: helpers.synchronize([device]))
print(f"queue the work (Python returns): {seconds(t_enqueue)}")
print(f"until the work is done: {seconds(t_complete)}")
if device.type == "cpu":
    print("CPU: the call returned only when the work was done (no queue), so both times agree.")
report.publish_all({"t_enqueue": t_enqueue, "t_complete": t_complete})

# %% tags=["blockers"]
blockers = {
    "item": lambda ys: ys[-1][0, 0].item(),  # a Python number needs the value
    "numpy": lambda ys: ys[-1][0, :4].cpu().numpy(),  # so does a NumPy array
    "print": lambda ys: print(ys[-1][0, :4], file=io.StringIO()),  # printing formats the values
    "sync": lambda ys: helpers.synchronize([device]),  # torch.cuda.synchronize(device) on a GPU
}
labels = {"item": ".item()", "numpy": ".cpu().numpy()", "print": "print()", "sync": "synchronize"}
for key, blocker in blockers.items():
    t_wait = queue_then(blocker)[1]
    print(f"wait in {labels[key]}: {seconds(t_wait)}")
    report.publish(f"t_wait_{key}", t_wait)
if device.type == "cpu":
    print("CPU: the work was already done when the blocker ran, so there was nothing to wait for.")

# %% tags=["avoid-waits"]
small = helpers.rand(min(options.size, 256), device)


def loop(read_every_step):
    """STEPS small steps that add up a 'loss'; read it every step or once at the end."""
    total = torch.zeros((), device=device)
    for _ in range(STEPS):
        total += small.mm(small).mean()
        if read_every_step:
            total.item()  # waits for this step before the next one is queued
    return total.item()


t_sync_each_step = helpers.measure(lambda: loop(True), [device], options.repeats)
t_sync_once = helpers.measure(lambda: loop(False), [device], options.repeats)
speedup_sync_once = speedup(t_sync_each_step, t_sync_once)
print(f"read a scalar every step: {seconds(t_sync_each_step)}")
print(f"read once at the end: {seconds(t_sync_once)}")
print(f"speedup of reading once: {speedup_sync_once:.2f}x")
if device.type == "cpu":
    print("CPU: no queue to drain, so reading every step costs only the reads themselves.")
report.publish_all({"t_sync_each_step": t_sync_each_step, "t_sync_once": t_sync_once,
                    "speedup_sync_once": speedup_sync_once})
figures = report.finish()
