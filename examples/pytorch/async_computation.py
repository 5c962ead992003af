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

# %% tags=["setup"]
import torch

import helpers
from common.keys import ASYNC_COMPUTATION
from common.stats import median, speedup

options, report = helpers.start(__doc__, ASYNC_COMPUTATION)
gpus = helpers.gpus(options.device)
device = gpus[0] if gpus else helpers.cpu()
print(f"device: {helpers.name(device)}; TF32 is off: every product is fp32.")
if device.type == "cpu":
    print("CPU: eager PyTorch runs each operation before the call returns, so nothing is "
          "queued and the blockers below have nothing to wait for.")
n = helpers.choose_size(options, report, device)
x = torch.rand(n, n, device=device)
steps, step_size = 200, min(n, 64)  # a loop of small steps
small = torch.rand(step_size, step_size, device=device)
report.publish_all({"devices": [helpers.name(device)], "steps": steps, "step_size": step_size})


# %% tags=["queue"]
def work():
    """Queue 50 products of x with itself; return their results."""
    return [x.mm(x) for _ in range(50)]


times = helpers.benchmark({
    "Python returns after": work,
    "the work is done after": lambda: (work(), helpers.synchronize(device)),
}, device, wait=False)  # the clock stops when the call returns

# %% tags=["queue-harness"]
t_queue, t_done = times.values()
report.publish_timing("t_queue", t_queue)
report.publish_timing("t_done", t_done)

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
def loop(read_every_step=False):
    total = torch.zeros((), device=device)
    for _ in range(steps):
        total += small.mm(small).mean()
        if read_every_step:
            total.item()  # a Python number: waits for this step
    return total

issue = helpers.benchmark({"Python issues one step": loop}, device,
                          wait=False, per=steps)
run = helpers.benchmark({"the device runs one step": loop}, device,
                        clock="gpu", per=steps)

# %% tags=["frontend-harness"]
(t_step_issue,), (t_step_gpu,) = issue.values(), run.values()
report.publish_timing("t_step_issue", t_step_issue)
report.publish_timing("t_step_gpu", t_step_gpu)
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

# %% tags=["finish"]
figures = report.finish()
