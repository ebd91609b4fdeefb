"""compare on mixed tables (text among other columns) and on numeric targets."""

import pytest

pd = pytest.importorskip("pandas")



