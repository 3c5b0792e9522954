// The measures of `quickfill eval`: exact match and edit similarity of a
// suggestion against the truth, and percentiles of a sample.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qf::cli {

// Exact match after trimming trailing spaces of each line and line breaks at
// the end of both (an inserted middle that ends where the hole's line break
// already is gives the same program): the usual normalisation of
// CrossCodeEval and RepoBench.
bool exact_match(std::string_view got, std::string_view truth);

// byte_similarity of the same normalised texts.
double edit_similarity(std::string_view got, std::string_view truth);
// 1 - Levenshtein(a, b) / max(|a|, |b|) over bytes, as is; 1 for two empty texts.
double byte_similarity(std::string_view a, std::string_view b);

// The p-th percentile (0..100, nearest rank) of `v`; 0 for an empty sample.
double percentile(std::vector<double> v, double p);

}  // namespace qf::cli
