// The settings validator (server/completion/api/setting_schema.h) on its own:
// one form of message with the value's path for every kind of value, and the
// normalized values it hands back.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "server/completion/api/setting_schema.h"

namespace qf::server::schema {
namespace {

namespace json = boost::json;
using T = value_type;
using M = member_schema;

const object_schema& item_schema() {
  static const object_schema s{"an item",
                               {
                                   M{.name = "id", .type = T::string, .required = true, .non_empty = true},
                                   M{.name = "size", .type = T::integer, .default_value = 3, .min = 1, .max = 9},
                               }};
  return s;
}

const object_schema& root_schema() {
  static const object_schema s{
      "the test object",
      {
          M{.name = "on", .type = T::boolean, .default_value = true},
          M{.name = "count", .type = T::integer, .default_value = 32, .min = 1, .max = 4096},
          M{.name = "share", .type = T::number, .min = 0.05, .max = 1},
          M{.name = "mode", .type = T::string, .default_value = "fast", .choices = {"fast", "slow"},
            .aliases = {{"quick", "fast"}}},
          M{.name = "tags", .type = T::string_list, .max_items = 2},
          M{.name = "loose", .type = T::string_list, .drop_bad_items = true},
          M{.name = "path", .type = T::string,
            .check = +[](std::string_view v, std::string* why) { return v.starts_with("/") || (*why = "must be absolute", false); }},
          M{.name = "items", .type = T::object_list, .members = &item_schema()},
      }};
  return s;
}

std::string error_of(const char* text) {
  std::string err;
  EXPECT_FALSE(validate_object(root_schema(), json::parse(text), "root", &err)) << text;
  return err;
}

TEST(SettingSchema, DefaultsAliasesAndNumbersAreNormalized) {
  std::string err;
  auto v = validate_object(root_schema(),
                           json::parse(R"({"count": 24.0, "mode": "quick", "share": 1, "on": null,
                                           "loose": ["a", 3, "", "a", "b"], "items": [{"id": "x"}]})"),
                           "", &err);
  ASSERT_TRUE(v) << err;
  EXPECT_EQ(get_int(*v, "count"), 24);
  EXPECT_TRUE(v->at("count").is_int64());
  EXPECT_EQ(get_string(*v, "mode"), "fast");  // the alias names the choice
  EXPECT_DOUBLE_EQ(get_number(*v, "share"), 1.0);
  EXPECT_TRUE(get_bool(*v, "on"));  // null: the default
  EXPECT_EQ(get_strings(*v, "loose"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(get_int(v->at("items").as_array()[0].as_object(), "size"), 3);  // an item's default
  EXPECT_FALSE(v->contains("path"));  // no default: absent stays absent
}

TEST(SettingSchema, EveryRefusalNamesThePath) {
  EXPECT_EQ(error_of(R"({"count": 0})"), "root.count: 0 is not accepted (expected an integer from 1 to 4096)");
  EXPECT_EQ(error_of(R"({"count": 2.5})"), "root.count: 2.5 is not accepted (expected an integer from 1 to 4096)");
  EXPECT_EQ(error_of(R"({"count": 18446744073709551615})"),
            "root.count: 18446744073709551615 is not accepted (expected an integer from 1 to 4096)");
  EXPECT_EQ(error_of(R"({"on": "yes"})"), "root.on: \"yes\" is not accepted (expected true or false)");
  EXPECT_EQ(error_of(R"({"share": 0})"), "root.share: 0 is not accepted (expected a number from 0.05 to 1)");
  EXPECT_EQ(error_of(R"({"mode": "medium"})"),
            "root.mode: \"medium\" is not accepted (expected one of \"fast\", \"slow\")");
  EXPECT_EQ(error_of(R"({"tags": ["a", "b", "c"]})"),
            "root.tags: [\"a\",\"b\",\"c\"] is not accepted (expected an array of at most 2 strings)");
  EXPECT_EQ(error_of(R"({"tags": ["a", 1]})"), "root.tags[1]: 1 is not accepted (expected a non-empty string)");
  EXPECT_EQ(error_of(R"({"path": "rel"})"), "root.path: must be absolute");
  EXPECT_EQ(error_of(R"({"items": [{"id": "a"}, {"id": "b", "size": 10}]})"),
            "root.items[1].size: 10 is not accepted (expected an integer from 1 to 9)");
  EXPECT_EQ(error_of(R"({"items": [{"size": 1}]})"), "root.items[0].id: missing (expected a non-empty string)");
  EXPECT_EQ(error_of(R"({"items": [{"id": "a", "colour": 1}]})"),
            "root.items[0].colour: unknown member of an item (known: id, size)");
  EXPECT_EQ(error_of(R"({"items": {"id": "a"}})"),
            "root.items: {\"id\":\"a\"} is not accepted (expected an array of objects)");
  EXPECT_EQ(error_of("[1]"), "root: [1] is not accepted (expected an object)");
}

TEST(SettingSchema, MembersReadByOthersAreNotUnknown) {
  std::string err;
  auto v = validate_object(item_schema(), json::parse(R"({"id": "a", "kind": "x"})"), "", &err, {"kind"});
  ASSERT_TRUE(v) << err;
  EXPECT_EQ(get_string(*v, "kind"), "x");
}

TEST(SettingSchema, TheReferenceTableListsEveryMember) {
  const std::string md = render_members_markdown(root_schema());
  EXPECT_NE(md.find("| `count` | integer | `32` | 1 to 4096 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `mode` | string | `\"fast\"` | `fast`, `slow` (also `quick` for `fast`) |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| `items` | array | none | array of objects |"), std::string::npos) << md;
}

}  // namespace
}  // namespace qf::server::schema
