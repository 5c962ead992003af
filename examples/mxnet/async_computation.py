# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Asynchronous computation with MXNet: the frontend queues, the engine runs.

You learn that every MXNet call only hands its work to the dependency engine
and returns at once, on the CPU as on a GPU, which calls block until the
queued work is done (.item(), .asnumpy(), print, npx.waitall()), and why
reading a value back at every step of a loop costs time. Needs nothing but a
CPU; uses the first GPU that MXNet can use, if there is one (MXNet 1.9.1 has
none for GPUs newer than sm_86, such as the H200). --size 4000 is slow on a
CPU: pass e.g. --size 1000 there.
"""

# %% tags=["setup"]
import io
import time

import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from helpers import seconds
from mxnet import np, npx
from common.keys import ASYNC_COMPUTATION
from common.stats import median, speedup

npx.set_np()
PRODUCTS = 50  # matrix products queued at once, as in auto_parallelism
STEPS = 200  # steps of the small loop in avoid-waits
options, report = helpers.start(__doc__, ASYNC_COMPUTATION)
gpus = helpers.gpus(options.device)
device = gpus[0] if gpus else helpers.cpu()
print(f"device: {helpers.name(device)}; TF32 is off: every product is fp32.")
if not gpus:
    print(f"{helpers.no_gpu_reason(options.device)}: running on the CPU, where MXNet's engine "
          "queues the work just as it would on a GPU.")
    print(helpers.CPU_THREADS_NOTE)
report.publish("devices", [helpers.name(device)])
x = helpers.rand(options.size, device)


def work():
    """Queue PRODUCTS independent products of x with itself; return their results."""
    return [x.dot(x) for _ in range(PRODUCTS)]


# %% tags=["queue"]
def queue_then(blocker):
    """Queue the work, then call blocker(ys): medians of (queueing, blocker, both)."""
    queued, waited, total = [], [], []
    for r in range(options.repeats + 1):  # round 0 warms up
        helpers.synchronize([device])
        begin = time.perf_counter()
        ys = work()  # queued in the engine, not done
        middle = time.perf_counter()
        blocker(ys)
        end = time.perf_counter()
        helpers.synchronize([device])  # let all the queued work finish before the next round
        if r:
            queued.append(middle - begin)
            waited.append(end - middle)
            total.append(end - begin)
    return median(queued), median(waited), median(total)


t_enqueue, _, t_complete = queue_then(lambda ys: npx.waitall())
print(f"queue the work (Python returns): {seconds(t_enqueue)}")
print(f"until the work is done: {seconds(t_complete)}")
report.publish_all({"t_enqueue": t_enqueue, "t_complete": t_complete})

# %% tags=["blockers"]
blockers = {
    "item": lambda ys: ys[-1][0, 0].item(),  # a Python number needs the value
    "numpy": lambda ys: ys[-1][0, :4].asnumpy(),  # so does a NumPy array
    "print": lambda ys: print(ys[-1][0, :4], file=io.StringIO()),  # printing formats the values
    "sync": lambda ys: npx.waitall(),  # waits for everything queued, on every device
}
labels = {"item": ".item()", "numpy": ".asnumpy()", "print": "print()", "sync": "npx.waitall()"}
for key, blocker in blockers.items():
    t_wait = queue_then(blocker)[1]
    print(f"wait in {labels[key]}: {seconds(t_wait)}")
    report.publish(f"t_wait_{key}", t_wait)

# %% tags=["avoid-waits"]
small = helpers.rand(min(options.size, 256), device)


def loop(read_every_step):
    """STEPS small steps that add up a 'loss'; read it every step or once at the end."""
    total = np.zeros((), ctx=device)
    for _ in range(STEPS):
        total += small.dot(small).mean()
        if read_every_step:
            total.item()  # waits for this step before the next one is queued
    return total.item()


t_sync_each_step = helpers.measure(lambda: loop(True), [device], options.repeats)
t_sync_once = helpers.measure(lambda: loop(False), [device], options.repeats)
speedup_sync_once = speedup(t_sync_each_step, t_sync_once)
print(f"read a scalar every step: {seconds(t_sync_each_step)}")
print(f"read once at the end: {seconds(t_sync_once)}")
print(f"speedup of reading once: {speedup_sync_once:.2f}x")
report.publish_all({"t_sync_each_step": t_sync_each_step, "t_sync_once": t_sync_once,
                    "speedup_sync_once": speedup_sync_once})
figures = report.finish()
