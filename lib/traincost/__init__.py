"""traincost: what will a large-model training run cost, before anyone spends?

Time, energy at the plug, carbon and dollars of training a transformer on a given
accelerator with a given parallel layout, with every assumption shown.

>>> import traincost
>>> est = traincost.estimate(accelerator="h100-sxm5-80gb", devices=256, model="llama2-7b",
...                          global_batch=1024, tokens=2e12)
>>> est.fits_in_memory
True
"""

from .assumptions import DEFAULT as DEFAULT_ASSUMPTIONS
from .assumptions import Assumptions, describe as describe_assumptions
from .catalog import accelerator, accelerators, job, model, models, regions, site
from .estimate import Estimate, compare, estimate
from .inputs import Accelerator, Job, ParallelConfig, Site, Stack, System, Workload
from .model import evaluate
from .search import SearchResult, search
from .sweep import sweep

__version__ = "0.1.0"

__all__ = [
    "Accelerator", "Assumptions", "DEFAULT_ASSUMPTIONS", "Estimate", "Job", "ParallelConfig",
    "Site", "Stack", "System", "Workload", "accelerator", "accelerators", "compare",
    "describe_assumptions", "estimate", "evaluate", "job", "model", "models", "regions",
    "search", "SearchResult", "site", "sweep", "__version__",
]
