// Consistent hashing of documents onto endpoints, and the failover order.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "server/remote/endpoint_ring.h"

using qf::remote::endpoint_ring;

namespace {
std::vector<std::string> urls(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("http://10.0.0." + std::to_string(i + 1) + ":8080");
  return v;
}
std::string doc(int i) { return "file:///project/src/module_" + std::to_string(i) + ".py"; }
}  // namespace

TEST(EndpointRing, TheSameDocumentAlwaysGoesToTheSameEndpoint) {
  endpoint_ring a(urls(4)), b(urls(4));
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(a.order(doc(i)), a.order(doc(i)));
    EXPECT_EQ(a.order(doc(i)), b.order(doc(i)));  // stable across instances (and runs)
  }
}

TEST(EndpointRing, OrderHoldsEveryEndpointOnce) {
  endpoint_ring r(urls(5));
  for (int i = 0; i < 50; ++i) {
    auto o = r.order(doc(i));
    ASSERT_EQ(o.size(), 5u);
    EXPECT_EQ(std::set<std::size_t>(o.begin(), o.end()).size(), 5u);
  }
}

TEST(EndpointRing, DocumentsSpreadOverAllEndpoints) {
  endpoint_ring r(urls(4));
  std::map<std::size_t, int> count;
  for (int i = 0; i < 4000; ++i) ++count[r.primary(doc(i))];
  ASSERT_EQ(count.size(), 4u);
  for (auto [e, n] : count) {
    EXPECT_GT(n, 500) << "endpoint " << e;  // 1000 each if perfectly even
    EXPECT_LT(n, 1600) << "endpoint " << e;
  }
}

TEST(EndpointRing, RemovingAnEndpointMovesOnlyItsDocumentsToTheirSecondChoice) {
  auto all = urls(4);
  endpoint_ring four(all);
  auto three_urls = all;
  three_urls.erase(three_urls.begin() + 2);  // endpoint 2 goes away
  endpoint_ring three(three_urls);
  auto index_in_four = [&](std::size_t i3) { return i3 >= 2 ? i3 + 1 : i3; };
  int moved = 0;
  for (int i = 0; i < 2000; ++i) {
    const auto o = four.order(doc(i));
    const std::size_t now = index_in_four(three.primary(doc(i)));
    if (o[0] != 2) {
      EXPECT_EQ(now, o[0]) << doc(i) << " moved although its endpoint stayed";
    } else {
      ++moved;
      EXPECT_EQ(now, o[1]) << doc(i) << " did not go to its failover endpoint";
    }
  }
  EXPECT_GT(moved, 0);
}

TEST(EndpointRing, OneEndpoint) {
  endpoint_ring r({"http://127.0.0.1:1"});
  EXPECT_EQ(r.order("file:///a"), std::vector<std::size_t>{0});
}
