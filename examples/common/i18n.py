"""The words of the drawn figures, in English and Turkish.

Every figure is drawn once per book language (``Report.figure(draw, name)``
calls ``draw(lang)``); the book shows the one that matches the page. Turkish
figures use the terms of the book's glossary, "s" for seconds, a decimal
comma and × in sizes. The sweep's tables are printed in both languages too.
"""
from typing import Dict

LANGUAGES = ("en", "tr")

TEXTS: Dict[str, Dict[str, str]] = {
    "en": {
        "time_s": "time (s)",
        "alone": "each job alone, one after another",
        "together": "both jobs together",
        "one_stream": "products, then copies, on one stream",
        "side_stream": "copies on a side stream into pinned buffers",
        "compute_stream": "compute stream",
        "copy_stream": "copy stream",
        "product": "product",
        "copy": "copy",
        "matrix_size": "matrix size n (n × n)",
        "overlap": "overlap",
        "full_overlap": "full overlap",
        "taking_turns": "taking turns",
        "sweep_title": "Parallelism on one device",
        "two_streams": "{device}: two jobs (two streams)",
        "two_threads": "{device}: two jobs (two threads)",
        "products_copies": "{device}: products + copies",
        "cpu_job": "cpu, job {i}",
    },
    "tr": {
        "time_s": "zaman (s)",
        "alone": "her iş tek başına, biri ötekinden sonra",
        "together": "iki iş birlikte",
        "one_stream": "önce çarpımlar, sonra kopyalar, tek akışta",
        "side_stream": "yan akışta, sabitlenmiş belleğe kopyalar",
        "compute_stream": "hesaplama akışı",
        "copy_stream": "kopyalama akışı",
        "product": "çarpım",
        "copy": "kopya",
        "matrix_size": "matris boyutu n (n × n)",
        "overlap": "örtüşme oranı",
        "full_overlap": "tam örtüşme",
        "taking_turns": "sırayla çalışma",
        "sweep_title": "Tek cihazda paralellik",
        "two_streams": "{device}: iki iş (iki akış)",
        "two_threads": "{device}: iki iş (iki iş parçacığı)",
        "products_copies": "{device}: çarpımlar + kopyalar",
        "cpu_job": "cpu, iş {i}",
    },
}


def text(lang: str, key: str, **values) -> str:
    """The figure text ``key`` in ``lang``, with ``values`` filled in."""
    return TEXTS[lang][key].format(**values)


def number(value: float, lang: str, spec: str = "g") -> str:
    """A number as the language writes it: ``0.5`` in English, ``0,5`` in Turkish."""
    formatted = format(value, spec)
    return formatted.replace(".", ",") if lang == "tr" else formatted


def localize_axis(axis, lang: str) -> None:
    """Give a numeric axis (e.g. ``ax.xaxis``) the language's decimal mark (a comma in Turkish)."""
    if lang != "tr":
        return
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: number(value, lang)))

# Texts of further examples follow below.
TEXTS["en"].update({
    "sweep_size": "size",
    "sweep_one": "one job (ms)",
    "sweep_two": "two at once (ms)",
    "sweep_overlap_two": "overlap",
    "sweep_copy": "copy (ms)",
    "sweep_both": "run+copy (ms)",
    "sweep_overlap_copy": "overlap",
    "time_ms": "time (ms)",
    "hybridize_title": "Two jobs of {n}×{n} products on two streams of one GPU",
    "hybridize_eager": "eager: one Python thread queues both jobs",
    "hybridize_graph": "one CUDA graph: both jobs launched at once",
    "hybridize_stream": "stream {i}",
})
TEXTS["tr"].update({
    "sweep_size": "boyut",
    "sweep_one": "tek iş (ms)",
    "sweep_two": "ikisi birlikte (ms)",
    "sweep_overlap_two": "örtüşme",
    "sweep_copy": "kopya (ms)",
    "sweep_both": "çarpım+kopya (ms)",
    "sweep_overlap_copy": "örtüşme",
    "time_ms": "zaman (ms)",
    "hybridize_title": "Bir GPU'nun iki akışında iki iş: {n}×{n} matris çarpımları",
    "hybridize_eager": "anında yürütme: tek Python iş parçacığı iki işi kuyruğa ekler",
    "hybridize_graph": "tek CUDA çizgesi: iki iş birlikte başlatılır",
    "hybridize_stream": "akış {i}",
})
TEXTS["en"].update({
    "roofline_title": "Roofline of {device}: measured ceilings and the chapter's workloads",
    "intensity": "arithmetic intensity (FLOP per byte of device memory)",
    "attainable": "attainable rate (TFLOP/s)",
    "ceiling_memory": "copy on the GPU, {value} GB/s",
    "ceiling_l2": "copy within the L2 cache, {value} GB/s",
    "ceiling_link": "pinned copy to the GPU, {value} GB/s",
    "ceiling_compute": "{precision} products, {value} TFLOP/s",
    "peak_line": "peaks from the hardware (dashed)",
    "point_product": "{n}×{n} product, fp32",
    "point_gelu_eager": "GELU, eager (9 kernels)",
    "point_gelu_compiled": "GELU, compiled (1 kernel)",
})
TEXTS["tr"].update({
    "roofline_title": "{device} için tavan çizgisi: ölçülen tavanlar ve bölümün işleri",
    "intensity": "aritmetik yoğunluk (cihaz belleğinin baytı başına FLOP)",
    "attainable": "ulaşılabilir hız (TFLOP/s)",
    "ceiling_memory": "GPU'da kopya, {value} GB/s",
    "ceiling_l2": "L2 önbelleği içinde kopya, {value} GB/s",
    "ceiling_link": "GPU'ya sabitlenmiş bellekten kopya, {value} GB/s",
    "ceiling_compute": "{precision} çarpımları, {value} TFLOP/s",
    "peak_line": "donanımdan hesaplanan tepe değerler (kesikli)",
    "point_product": "{n}×{n} çarpım, fp32",
    "point_gelu_eager": "GELU, anında yürütme (9 çekirdek)",
    "point_gelu_compiled": "GELU, derlenmiş (1 çekirdek)",
})
