// The document store's synchronisation: a failed change makes a document
// stale until a full text, versions, size limits, and snapshots sharing their
// text (UTF-8 and line breaks themselves are tests/text/).
#include <gtest/gtest.h>

#include "indexing/document_store.h"
#include "indexing/shared_text.h"

using namespace qf::index;
using qf::text::position_encoding;

TEST(DocumentStoreSync, FailedChangeMakesTheDocumentStaleUntilAFullText) {
  document_store store;
  store.open("u", "c", 1, "one\ntwo");
  std::string err;
  text_change bad{text_range{7, 0, 7, 0}, "x"};
  EXPECT_FALSE(store.change("u", 2, {bad}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  EXPECT_NE(store.lookup("u").reason.find("line 7 is past the last line"), std::string::npos);
  EXPECT_EQ(store.get("u")->text, "one\ntwo");  // the last good text is kept
  EXPECT_TRUE(store.recent("", 10).empty());   // and never used as context
  // Incremental edits still apply but do not bring it back.
  EXPECT_TRUE(store.change("u", 3, {{text_range{0, 0, 0, 0}, ">"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  // A batch with a full text does, from that change on.
  EXPECT_TRUE(store.change("u", 4, {bad, {std::nullopt, "new"}, {text_range{0, 3, 0, 3}, "!"}},
                           position_encoding::utf16, &err))
      << err;
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
  EXPECT_EQ(store.get("u")->text, "new!");
  EXPECT_EQ(store.get("u")->version, 4);
}

TEST(DocumentStoreSync, VersionThatIsNotGreaterMarksStale) {
  document_store store;
  store.open("u", "c", 5, "abc");
  std::string err;
  EXPECT_FALSE(store.change("u", 5, {{text_range{0, 0, 0, 0}, "x"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("version 5 is not greater than the stored version 5"), std::string::npos) << err;
  EXPECT_EQ(store.get("u")->text, "abc");
  EXPECT_EQ(store.lookup("u").state, doc_state::stale);
  // A full text is accepted whatever its version.
  EXPECT_TRUE(store.change("u", 3, {{std::nullopt, "xyz"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
  store.open("u", "c", 1, "reopened");
  EXPECT_TRUE(store.mark_stale("u", "lost"));
  store.open("u", "c", 1, "again");
  EXPECT_EQ(store.lookup("u").state, doc_state::open);
}

TEST(DocumentStoreSync, LimitsRefuseDocumentsWhichAreThenNotTracked) {
  document_store store(store_limits{2, 10});
  std::string err;
  EXPECT_TRUE(store.open("a", "c", 1, "aaaa", &err));
  EXPECT_TRUE(store.open("b", "c", 1, "bbbb", &err));
  EXPECT_FALSE(store.open("c", "c", 1, "c", &err));
  EXPECT_NE(err.find("over the limit of 2"), std::string::npos) << err;
  EXPECT_EQ(store.lookup("c").state, doc_state::not_tracked);
  EXPECT_EQ(store.get("c"), nullptr);
  EXPECT_FALSE(store.change("c", 2, {{std::nullopt, "x"}}, position_encoding::utf16, &err));
  EXPECT_NE(err.find("not tracked"), std::string::npos) << err;
  // Re-opening an open document replaces it (no extra count), bytes are checked.
  EXPECT_TRUE(store.open("b", "c", 2, "bbbbbb", &err));
  EXPECT_EQ(store.total_bytes(), 10u);
  // A change past the byte limit stops tracking the document.
  EXPECT_FALSE(store.change("a", 2, {{text_range{0, 0, 0, 0}, "x"}}, position_encoding::utf16, &err));
  EXPECT_EQ(store.lookup("a").state, doc_state::not_tracked);
  EXPECT_EQ(store.total_bytes(), 6u);
  EXPECT_TRUE(store.close("c"));
  EXPECT_EQ(store.lookup("c").state, doc_state::not_open);
  EXPECT_TRUE(store.open("c", "c", 1, "c", &err)) << err;
  EXPECT_EQ(store.size(), 2u);
}

TEST(SharedText, RequestsShareTheSnapshotText) {
  document_store store;
  store.open("u", "c", 1, "shared body");
  const document_store::snapshot snap = store.get("u");
  const shared_text t(snap);
  EXPECT_EQ(t.view().data(), snap->text.data());  // no copy
  EXPECT_TRUE(t.shares(shared_text(snap)));
  store.close("u");
  EXPECT_EQ(t.view(), "shared body");  // kept alive by the request
  const shared_text owned = std::string("own");
  EXPECT_EQ(owned.view(), "own");
  EXPECT_FALSE(owned.shares(shared_text(std::string("own"))));
}
