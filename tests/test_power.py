"""Power model: linear in activity between idle and max; host share."""

import numpy as np
import pytest

from traincost.power import device_power_w, host_power_w


def test_endpoints():
    assert device_power_w(400, 50, 1.0, 1.0, 0.0) == 400
    assert device_power_w(400, 50, 0.0, 1.0, 0.0) == 50


def test_hand_value():
    # 60% busy at 0.85 of range, 40% waiting at 0.68: 50 + 350*(0.51 + 0.272) = 323.7 W
    assert device_power_w(400, 50, 0.6, 0.85, 0.68) == pytest.approx(323.7)


def test_power_between_idle_and_max():
    u = np.linspace(0, 1, 11)
    p = device_power_w(700, 70, u, 0.85, 0.68)
    assert np.all((p >= 70) & (p <= 700))
    assert np.all(np.diff(p) > 0)        # computing draws more than waiting


def test_host_share():
    assert host_power_w(300.0, 0.3) == pytest.approx(90.0)
