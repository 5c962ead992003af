"""A stand-in for pynvml (the nvidia-ml-py package), for the tests of the peaks on a machine without a GPU."""


class FakeNvml:
    """Answers like pynvml for a machine with two GPUs; the H200 is the second one."""
    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2

    def __init__(self, generation=5, width=16, clock=1980, fail_init=False):
        self.gpus = [{"uuid": b"GPU-aaaaaaaa-0000", "gen": 4, "width": 8, "clock": 1000, "memory": 1215, "bus": 5120},
                     {"uuid": "GPU-58A5F1B5-1111", "gen": generation, "width": width, "clock": clock,
                      "memory": 3201, "bus": 6144}]
        self.fail_init, self.open = fail_init, False

    def nvmlInit(self):
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")
        self.open = True

    def nvmlShutdown(self):
        self.open = False

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, i):
        return self.gpus[i]

    def nvmlDeviceGetUUID(self, handle):
        return handle["uuid"]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle):
        return handle["gen"]

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle):
        return handle["width"]

    def nvmlDeviceGetMaxClockInfo(self, handle, clock):
        return {self.NVML_CLOCK_SM: handle["clock"], self.NVML_CLOCK_MEM: handle["memory"]}[clock]

    def nvmlDeviceGetMemoryBusWidth(self, handle):
        return handle["bus"]
