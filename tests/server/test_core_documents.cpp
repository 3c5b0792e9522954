// The server core's documents: completion requests and their context share
// the store's snapshot text (no copy per request), lost messages mark
// documents stale, and the core's limits come from its options.
#include <gtest/gtest.h>

#include "server/core/server_core.h"

using namespace qf::server;

namespace {

server_core make_core(qf::index::store_limits limits = {}) {
  core_options o;
  o.background = false;
  o.documents = limits;
  return server_core(std::move(o), [](std::function<void()> fn) { fn(); });
}

}  // namespace

TEST(CoreDocuments, ContextDocumentsShareTheStoredText) {
  server_core core = make_core();
  std::string err;
  ASSERT_TRUE(core.open("file:///a", "c", 1, std::string(1 << 20, 'a'), &err));
  ASSERT_TRUE(core.open("file:///b", "c", 1, std::string(1 << 20, 'b'), &err));
  completion_request req;
  req.uri = "file:///a";
  req.text = qf::index::shared_text(core.documents().get("file:///a"));
  core.add_context(req);
  ASSERT_EQ(req.context_docs.size(), 1u);
  EXPECT_EQ(req.context_docs[0].uri, "file:///b");
  // The very bytes of the stored snapshots, not copies of them.
  EXPECT_EQ(req.text.view().data(), core.documents().get("file:///a")->text.data());
  EXPECT_EQ(req.context_docs[0].text.view().data(), core.documents().get("file:///b")->text.data());
  // A stale document is not offered as context.
  EXPECT_EQ(core.document_lost("file:///b", "lost"), 1u);
  completion_request again;
  again.uri = "file:///a";
  core.add_context(again);
  EXPECT_TRUE(again.context_docs.empty());
}

TEST(CoreDocuments, LostMessageWithoutUriMarksEveryDocumentStale) {
  server_core core = make_core();
  std::string err;
  ASSERT_TRUE(core.open("file:///a", "c", 1, "a", &err));
  ASSERT_TRUE(core.open("file:///b", "c", 1, "b", &err));
  EXPECT_EQ(core.document_lost("", "unreadable didChange"), 2u);
  EXPECT_EQ(core.documents().stale_count(), 2u);
  EXPECT_EQ(core.documents().lookup("file:///a").reason, "unreadable didChange");
}

TEST(CoreDocuments, LimitsComeFromTheOptions) {
  server_core core = make_core(qf::index::store_limits{1, 100});
  std::string err;
  EXPECT_TRUE(core.open("file:///a", "c", 1, "a", &err));
  EXPECT_FALSE(core.open("file:///b", "c", 1, "b", &err));
  EXPECT_NE(err.find("over the limit of 1"), std::string::npos) << err;
  EXPECT_EQ(core.documents().lookup("file:///b").state, qf::index::doc_state::not_tracked);
}
