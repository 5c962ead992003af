# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Asynchronous computation with PyTorch: the frontend queues, the GPU runs.

You learn that on a GPU a PyTorch call only queues its work and returns at
once, which calls wait until the queued work is done (.item(), .numpy(),
str(), torch.cuda.synchronize()), and what reading a value back at every step
of a loop costs: the loop's steps are issued by Python and run by the GPU,
and a read makes each wait for the other. On the CPU eager PyTorch queues
nothing; the script says so. Needs nothing but a CPU; uses the first GPU if
there is one. --size auto: 4000 on a GPU, on the CPU the size at which the
50 products take about 0.2 s.
"""

# %% tags=["harness"]
import helpers
from common.stats import median, speedup

options, report = helpers.start(__doc__, "async_computation")

# %% tags=["setup"]
import torch

import helpers  # the book's devices and timer

device = helpers.try_gpu()  # the first GPU, or the CPU without one
n = helpers.matrix_size(device)  # 4000 on a GPU
x = torch.rand(n, n, device=device)

# %% tags=["setup-harness"]
print("TF32 is off: every product is fp32.")
if device.type == "cpu":
    print("CPU: eager PyTorch runs each operation before the call returns, so nothing is "
          "queued and the blockers below have nothing to wait for.")
report.publish_all({"size": n, "devices": [helpers.name(device)]})


# %% tags=["queue"]
def work():
    """Queue 50 products of x with itself; return their results."""
    return [x.mm(x) for _ in range(50)]


queued = helpers.benchmark({"Python returns after": work}, device, wait=False)
done = helpers.benchmark({"the work is done after": work}, device)

# %% tags=["queue-harness"]
report.publish_timing("t_queue", queued["Python returns after"])
report.publish_timing("t_done", done["the work is done after"])

# %% tags=["blockers"]
# Each case reads one or four values of the last result: a tiny copy.
waits = helpers.benchmark({
    "work, then .item()": lambda: work()[-1][0, 0].item(),
    "work, then .cpu().numpy()": lambda: work()[-1][0, :4].cpu().numpy(),
    "work, then str()": lambda: str(work()[-1][0, :4]),
}, device, wait=False)

# %% tags=["blockers-harness"]
for key, samples in zip(["t_item", "t_numpy", "t_str"], waits.values()):
    report.publish_timing(key, samples)
if device.type == "cpu":
    print("CPU: the work was done when the calls returned, so every case took as long "
          "as the work itself.")

# %% tags=["frontend"]
steps, small = 200, torch.rand(64, 64, device=device)  # small steps


def loop(read_every_step=False):
    total = torch.zeros((), device=device)
    for _ in range(steps):
        total += small.mm(small).mean()
        if read_every_step:
            total.item()  # a Python number: waits for this step
    return total

# %% tags=["frontend-time"]
issue = helpers.benchmark({"Python issues one step": loop}, device,
                          wait=False, per=steps)
run = helpers.device_benchmark({"the device runs one step": loop},
                               device, per=steps)

# %% tags=["frontend-harness"]
(t_step_issue,), (t_step_gpu,) = issue.values(), run.values()
report.publish_timing("t_step_issue", t_step_issue)
report.publish_timing("t_step_gpu", t_step_gpu)
report.publish_all({"steps": steps, "step_size": small.shape[0]})
if device.type == "cpu":
    print("CPU: Python runs each step itself, so issuing a step takes as long as running it.")

# %% tags=["read-once"]
reads = helpers.benchmark({
    "read every step": lambda: loop(read_every_step=True),
    "read once at the end": lambda: loop().item(),
}, device)

# %% tags=["read-once-harness"]
t_read_each_step, t_read_once = reads.values()
speedup_read_once = speedup(median(t_read_each_step), median(t_read_once))
print(f"reading once is {speedup_read_once:.2f} times as fast")
report.publish_timing("t_read_each_step", t_read_each_step)
report.publish_timing("t_read_once", t_read_once)
report.publish("speedup_read_once", speedup_read_once)

# %% tags=["run-ahead"]
import time

tiny = torch.zeros((), device=device)
work()  # 50 large products go into the queue first
returned = []  # when each small operation's call returned
for _ in range(3000):
    tiny.add_(1)
    returned.append(time.perf_counter())
gaps = [b - a for a, b in zip(returned, returned[1:])]
ahead = next((i + 1 for i, g in enumerate(gaps) if g > 1e-3), len(returned))
print(f"calls that returned at once: {ahead} of {len(returned)}")
print(f"longest wait of one call: {max(gaps) * 1e3:.1f} ms")

# %% tags=["run-ahead-harness"]
if device.type == "cpu":
    print("CPU: nothing is queued; each call ran its operation before it returned.")
report.publish_all({"run_ahead": ahead, "run_ahead_calls": len(returned)})

# %% tags=["finish"]
figures = report.finish()
