# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Asynchronous computation with MXNet: the frontend queues, the engine runs.

You learn that every MXNet call only hands its work to the dependency engine
and returns at once, on the CPU as on a GPU, which calls wait until the
queued work is done (.item(), .asnumpy(), str(), npx.waitall()), and what
reading a value back at every step of a loop costs: the steps are issued by
Python and run by the engine, and a read makes each wait for the other.
Needs nothing but a CPU; uses the first GPU that MXNet can use, if there is
one (MXNet 1.9.1 has none for GPUs newer than sm_86, such as the H200).
--size auto: 4000 on a GPU, on a CPU context the size at which the 50
products take about 0.2 s.
"""

# %% tags=["setup"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from mxnet import np, npx
from common.keys import ASYNC_COMPUTATION
from common.stats import median, speedup

options, report = helpers.start(__doc__, ASYNC_COMPUTATION)
gpus = helpers.gpus(options.device)
device = gpus[0] if gpus else helpers.cpu()
print(f"device: {helpers.name(device)}; TF32 is off: every product is fp32.")
if not gpus:
    print(f"{helpers.no_gpu_reason(options.device)}: running on the CPU, where MXNet's engine "
          "queues the work just as it would on a GPU.")
    print(helpers.CPU_THREADS_NOTE)
n = helpers.choose_size(options, report, device)
x = helpers.rand(n, device)
steps, step_size = 200, min(n, 64)  # a loop of small steps
small = helpers.rand(step_size, device)
report.publish_all({"devices": [helpers.name(device)], "steps": steps, "step_size": step_size})


# %% tags=["queue"]
def work():
    """Queue 50 products of x with itself; return their results."""
    return [x.dot(x) for _ in range(50)]


times = helpers.benchmark({
    "Python returns after": work,
    "the work is done after": lambda: (work(), npx.waitall()),
}, device, wait=False)  # the clock stops when the call returns

# %% tags=["queue-harness"]
t_queue, t_done = times.values()
report.publish_timing("t_queue", t_queue)
report.publish_timing("t_done", t_done)

# %% tags=["blockers"]
# Each case reads one or four values of the last result: a tiny copy.
waits = helpers.benchmark({
    "work, then .item()": lambda: work()[-1][0, 0].item(),
    "work, then .asnumpy()": lambda: work()[-1][0, :4].asnumpy(),
    "work, then str()": lambda: str(work()[-1][0, :4]),
}, device, wait=False)

# %% tags=["blockers-harness"]
for key, samples in zip(["t_item", "t_numpy", "t_str"], waits.values()):
    report.publish_timing(key, samples)


# %% tags=["frontend"]
def loop(read_every_step=False):
    total = np.zeros((), ctx=device)
    for _ in range(steps):
        total += small.dot(small).mean()
        if read_every_step:
            total.item()  # a Python number: waits for this step
    return total

issue = helpers.benchmark({"Python issues one step": loop}, device,
                          wait=False, per=steps)
run = helpers.benchmark({"the engine runs one step": loop}, device,
                        clock="gpu", per=steps)

# %% tags=["frontend-harness"]
(t_step_issue,), (t_step_gpu,) = issue.values(), run.values()
report.publish_timing("t_step_issue", t_step_issue)
report.publish_timing("t_step_gpu", t_step_gpu)
print(f"the device's time is its busy time in MXNet's profiler, on {helpers.name(device)}")

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
