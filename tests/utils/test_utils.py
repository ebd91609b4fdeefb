import subprocess
import sys

import numpy as np
import pytest


def test_importing_skembed_and_classical_estimators_do_not_import_torch():
    code = (
        "import sys, skembed\n"
        "from skembed import TfidfLSA, PPMIEmbedder\n"
        "docs = ['the cat sat on the mat', 'the dog sat on the log', 'cats and dogs']\n"
        "TfidfLSA(2, random_state=0).fit_transform(docs)\n"
        "PPMIEmbedder(2, window=2, random_state=0).fit_transform(docs)\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ["Word2VecTransformer", "TfidfLSA", "AutoencoderEmbedder"])
def test_device_parameter_is_checked_before_fit_works(name):
    from sklearn.utils._param_validation import InvalidParameterError

    import skembed

    est = getattr(skembed, name)(device=3)
    with pytest.raises(InvalidParameterError, match=r"'device' parameter .* must be a device name"):
        est.fit(["a b c", "b c d"] if name != "AutoencoderEmbedder" else np.ones((4, 2)))


# ----------------------------------------------------------------------------- discovery
