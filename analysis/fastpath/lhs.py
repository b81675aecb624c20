"""Kernel Tuner's Latin-hypercube sample of configuration indices, with each point's closest configuration memoised.

Constraint-aware differential evolution starts from such a sample in every run, and the same
points come back run after run; a point that is no valid configuration costs Kernel Tuner a pass
over the whole space. The sample is Kernel Tuner's own in every other respect (see
`lhs_sample_indices`). `analysis.simulate.seeding.seeded_latin_hypercube` uses it when given the
space's memo.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def lhs_sample_indices(searchspace: Any, num_samples: int, *, memo: dict, original: Any) -> list[int]:
    """Kernel Tuner's Searchspace.get_LHS_sample_indices with the closest configuration of each point memoised.

    Kernel Tuner draws a Latin hypercube of parameter-index points; a point that is a valid
    configuration is taken as it is, any other is replaced by the configuration with the smallest
    sum of absolute index differences (the first such, by np.argmin over the whole space). That
    search is a pass over every configuration, and in constraint-aware DE runs the same points come
    back (100 runs on an 11,130-configuration space: 140,573 searches, 11,142 distinct points), so
    the answer is kept in `memo` per point. On a miss it is computed by Kernel Tuner's own private
    function into Kernel Tuner's buffers, as there. Everything else is done as there: the draw
    (`qmc.LatinHypercube` looked up at call time, so the seeded one), the look-ups, the
    de-duplication through a set and the fill-up with random samples. The cases Kernel Tuner treats
    specially (a sample as large as the space or larger) go to `original`.
    """
    from scipy.stats import qmc

    if num_samples >= searchspace.size:
        return original(searchspace, num_samples)
    if searchspace.params_values_indices is None:
        searchspace._Searchspace__prepare_neighbors_index()
    points = qmc.LatinHypercube(len(searchspace.params_values)).integers(
        l_bounds=searchspace.get_param_indices_lower_bounds(),
        u_bounds=searchspace.get_param_indices_upper_bounds(),
        n=num_samples,
        endpoint=True)
    points = np.array(points, dtype=searchspace.params_values_indices.dtype)
    indices = []
    for point in points:
        index = searchspace.get_param_config_index(searchspace.get_param_config_from_param_indices(point))
        if index is None:
            key = ("lhs_closest", point.dtype.str, point.tobytes())
            index = memo.get(key)
            if index is None:
                searchspace._Searchspace__calc_sum_of_index_differences(point)
                index = memo[key] = np.argmin(searchspace._alloc_sum_of_index_differences).item()
        indices.append(index)
    indices = list(set(indices))
    while len(indices) < num_samples:
        indices.extend(searchspace.get_random_sample_indices(num_samples - len(indices)).tolist())
        indices = list(set(indices))
    return indices
