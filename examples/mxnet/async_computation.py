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

# %% tags=["harness"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from common.stats import median, speedup

options, report = helpers.start(__doc__, "async_computation")

# %% tags=["setup"]
import helpers  # the book's devices and timer; first, for MXNet's imports
from mxnet import np, npx

device = helpers.try_gpu()  # the first GPU, or the CPU without one
n = helpers.matrix_size(device)  # 4000 on a GPU
x = np.random.uniform(size=(n, n), ctx=device)

# %% tags=["setup-harness"]
if device.device_type == "cpu":
    print(f"{helpers.no_gpu_reason(options.device)}: running on the CPU, where MXNet's engine "
          "queues the work just as it would on a GPU.")
    print(helpers.CPU_THREADS_NOTE)
report.publish_all({"size": n, "devices": [helpers.name(device)]})


# %% tags=["queue"]
def work():
    """Queue 50 products of x with itself; return their results."""
    return [x.dot(x) for _ in range(50)]


queued = helpers.benchmark({"Python returns after": work}, device, wait=False)
done = helpers.benchmark({"the work is done after": work}, device)

# %% tags=["queue-harness"]
report.publish_timing("t_queue", queued["Python returns after"])
report.publish_timing("t_done", done["the work is done after"])

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

# %% tags=["wait-to-read"]
z = np.ones((64, 64), ctx=npx.cpu(1))  # another context, its own worker


def work_and_small():
    work()  # 50 products on device, queued first
    return np.tanh(z)  # small work that does not depend on them


barriers = helpers.benchmark({
    "tanh(z).wait_to_read()": lambda: work_and_small().wait_to_read(),
    "npx.waitall()": lambda: (work_and_small(), npx.waitall()),
}, device, wait=False)


# %% tags=["frontend"]
steps, small = 200, np.random.uniform(size=(64, 64), ctx=device)  # small steps


def loop(read_every_step=False):
    total = np.zeros((), ctx=device)
    for _ in range(steps):
        total += small.dot(small).mean()
        if read_every_step:
            total.item()  # a Python number: waits for this step
    return total

# %% tags=["frontend-time"]
issue = helpers.benchmark({"Python issues one step": loop}, device,
                          wait=False, per=steps)
run = helpers.device_benchmark({"the engine runs one step": loop},
                               device, per=steps)

# %% tags=["frontend-harness"]
(t_step_issue,), (t_step_gpu,) = issue.values(), run.values()
report.publish_timing("t_step_issue", t_step_issue)
report.publish_timing("t_step_gpu", t_step_gpu)
report.publish_all({"steps": steps, "step_size": small.shape[0]})
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

# %% tags=["run-ahead"]
import time

tiny = np.zeros((), ctx=device)
work()  # 50 large products go into the queue first
returned = []  # when each small operation's call returned
for _ in range(3000):
    tiny += 1
    returned.append(time.perf_counter())
gaps = [b - a for a, b in zip(returned, returned[1:])]
ahead = next((i + 1 for i, g in enumerate(gaps) if g > 1e-3), len(returned))
print(f"calls that returned at once: {ahead} of {len(returned)}")
print(f"longest wait of one call: {max(gaps) * 1e3:.1f} ms")

# %% tags=["run-ahead-harness"]
npx.waitall()  # the engine finishes the queued additions before the next script step
report.publish_all({"run_ahead": ahead, "run_ahead_calls": len(returned)})

# %% tags=["finish"]
figures = report.finish()
