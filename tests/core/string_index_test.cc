// PackedStrings, StringIndex and PackedStringMap: ids in order, views that survive growth,
// lookups by string, equal strings as one entry, replacement, and a table grown past the
// huge-page threshold keeping every entry.
#include "core/string_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tapeflow {
namespace {

TEST(PackedStringsTest, IdsFollowTheOrderAddedAndViewsSurviveNewChunks) {
  PackedStrings strings;
  EXPECT_EQ(strings.add("alpha"), 0u);
  EXPECT_EQ(strings.add(""), 1u);
  const std::string_view first = strings[0];
  const std::string big(100'000, 'x');  // larger than a chunk: a chunk of its own
  EXPECT_EQ(strings.add(big), 2u);
  for (int i = 0; i < 20'000; ++i) strings.add("name_" + std::to_string(i));  // several more chunks
  EXPECT_EQ(strings.size(), 20'003u);
  EXPECT_EQ(first.data(), strings[0].data());
  EXPECT_EQ(strings[0], "alpha");
  EXPECT_EQ(strings[1], "");
  EXPECT_EQ(strings[2], big);
  EXPECT_EQ(strings[20'002], "name_19999");
  const std::string longest_short(254, 's'), shortest_long(255, 'l');  // a length byte's limit
  EXPECT_EQ(strings.add(longest_short), 20'003u);
  EXPECT_EQ(strings.add(shortest_long), 20'004u);
  EXPECT_EQ(strings[20'003], longest_short);
  EXPECT_EQ(strings[20'004], shortest_long);
  strings.pop_back();
  strings.pop_back();
  strings.pop_back();
  EXPECT_EQ(strings.size(), 20'002u);
  EXPECT_EQ(strings.add("again"), 20'002u);
  EXPECT_EQ(strings[20'002], "again");
  EXPECT_EQ(strings[20'001], "name_19998");
  strings.clear();
  EXPECT_EQ(strings.size(), 0u);
  EXPECT_EQ(strings.add("fresh"), 0u);
}

TEST(StringIndexTest, FindsIdsByStringKeepsTheFirstOfEqualStringsAndReplacesOnAssign) {
  PackedStrings names;
  StringIndex<PackedStrings::KeyOf> index(names.key_of());
  for (const char* n : {"a", "b", "a/c"}) {
    const uint32_t id = names.add(n);
    EXPECT_EQ(index.insert(names[id], id), std::make_pair(id, true));
  }
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.find("a/c"), 2);
  EXPECT_EQ(index.find("a"), 0);
  EXPECT_EQ(index.find("c"), -1);
  EXPECT_TRUE(index.contains("b"));
  EXPECT_FALSE(index.contains("B"));

  const uint32_t again = names.add("b");  // an equal string under a new id
  EXPECT_EQ(index.insert(names[again], again), std::make_pair(1u, false));
  EXPECT_EQ(index.find("b"), 1);
  index.insert_or_assign(names[again], again);
  EXPECT_EQ(index.find("b"), 3);
  EXPECT_EQ(index.size(), 3u);

  index.erase("a");
  EXPECT_EQ(index.find("a"), -1);
  EXPECT_EQ(index.find("a/c"), 2);
  index.clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find("b"), -1);
}

TEST(StringIndexTest, AnIndexOverStringsKeptByItsOwnerGrowsAndKeepsEveryEntry) {
  // As GraphState's by_name_: the strings are the owner's, the index only their ids.
  std::vector<std::string> owned;
  struct KeyOf {
    const std::vector<std::string>* strings;
    std::string_view operator()(uint32_t id) const { return (*strings)[id]; }
  };
  StringIndex<KeyOf> index(KeyOf{&owned});
  constexpr int kCount = 700'000;  // 8-byte slots pass the 2 MiB huge-page threshold
  owned.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    owned.push_back("node_" + std::to_string(i));
    ASSERT_TRUE(index.insert(owned.back(), static_cast<uint32_t>(i)).second);
  }
  ASSERT_EQ(index.size(), static_cast<size_t>(kCount));
  // Every one: among 700k names some share their 32 kept hash bits (about 57 pairs expected),
  // and those are told apart by their strings.
  int found = 0;
  for (int i = 0; i < kCount; ++i) found += index.find(owned[static_cast<size_t>(i)]) == i;
  EXPECT_EQ(found, kCount);
  EXPECT_EQ(index.find("node_700000"), -1);
}

// GraphState's by_name_: lookups exact, but names that differ only in case hash alike, so the
// index also tells whether a name is taken ignoring case.
TEST(StringIndexTest, ACaseFoldingIndexFindsExactlyAndAnswersIgnoringCase) {
  std::vector<std::string> owned{"Conv", "conv_1", "Dense/MatMul"};
  struct KeyOf {
    const std::vector<std::string>* strings;
    std::string_view operator()(uint32_t id) const { return (*strings)[id]; }
  };
  StringIndex<KeyOf, /*kFoldCase=*/true> index(KeyOf{&owned});
  for (uint32_t id = 0; id < owned.size(); ++id) EXPECT_TRUE(index.insert(owned[id], id).second);
  EXPECT_EQ(index.find("Conv"), 0);
  EXPECT_EQ(index.find("conv"), -1);  // exact
  EXPECT_EQ(index.find("Dense/MatMul"), 2);
  EXPECT_TRUE(index.contains_folded("conv"));
  EXPECT_TRUE(index.contains_folded("dense/matmul"));
  EXPECT_TRUE(index.contains_folded("conv_1"));
  EXPECT_FALSE(index.contains_folded("conv_2"));
  EXPECT_FALSE(index.contains_folded("con"));

  // "CONV" is taken ignoring case: not added, and the id holding it comes back.
  owned.push_back("CONV");
  EXPECT_EQ(index.insert_unless_folded("conv", 3), std::make_pair(0u, false));
  EXPECT_EQ(index.find("CONV"), -1);
  owned.push_back("Pool");
  EXPECT_EQ(index.insert_unless_folded("pool", 4), std::make_pair(4u, true));
  EXPECT_EQ(index.find("Pool"), 4);
  EXPECT_TRUE(index.contains_folded("pool"));

  // An exact insert still takes a name equal to another only ignoring case; both are found.
  EXPECT_TRUE(index.insert(owned[3], 3).second);
  EXPECT_EQ(index.find("CONV"), 3);
  EXPECT_EQ(index.find("Conv"), 0);
  index.erase("Conv");
  EXPECT_EQ(index.find("Conv"), -1);
  EXPECT_TRUE(index.contains_folded("conv"));  // "CONV" still is
  // A name longer than the stack buffer the hash lowercases into.
  owned.push_back(std::string(100, 'Q'));
  EXPECT_TRUE(index.insert(owned[5], 5).second);
  EXPECT_EQ(index.find(std::string(100, 'Q')), 5);
  EXPECT_TRUE(index.contains_folded(std::string(100, 'q')));
  EXPECT_EQ(index.size(), 5u);
}

TEST(PackedStringMapTest, TryEmplaceAddsOnceAndKeepsValuesBesideTheirKeys) {
  PackedStringMap<int> uses;
  auto [a, added] = uses.try_emplace("conv", 1);
  EXPECT_TRUE(added);
  EXPECT_EQ(*a, 1);
  auto [again, added_again] = uses.try_emplace("conv", 7);
  EXPECT_FALSE(added_again);
  EXPECT_EQ(*again, 1);
  ++*again;
  for (int i = 0; i < 10'000; ++i) uses.try_emplace("conv_" + std::to_string(i), i);
  ASSERT_NE(uses.find("conv"), nullptr);
  EXPECT_EQ(*uses.find("conv"), 2);
  EXPECT_EQ(*uses.find("conv_9999"), 9999);
  EXPECT_EQ(uses.find("dense"), nullptr);
  EXPECT_TRUE(uses.contains("conv_0"));
  EXPECT_EQ(uses.size(), 10'001u);
}

}  // namespace
}  // namespace tapeflow
