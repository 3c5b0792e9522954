// Definition and import extraction per language, on real snippets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "indexing/definition_extract.h"
#include "indexing/document.h"
#include "indexing/syntax_language.h"
#include "indexing/syntax_tree.h"

using namespace qf::index;

namespace {

// Parses `text` and extracts; skips the test when the grammar is not built.
#define EXTRACT(LANG, SOURCE)                                                             \
  const syntax_language* language = syntax_language_named(LANG);                         \
  if (!language) GTEST_SKIP() << LANG << " grammar not built";                           \
  syntax_document sd(*language);                                                         \
  sd.reset(std::make_shared<const document>("file:///x", LANG, 0, std::string(SOURCE))); \
  ASSERT_EQ(sd.parse(parse_limits{}), parse_status::parsed);                             \
  const file_definitions got = extract_definitions(sd.tree(), *language, sd.current()->text)

const definition* find(const file_definitions& f, const std::string& name, const std::string& container = "*") {
  for (const auto& d : f.definitions)
    if (d.name == name && (container == "*" || d.container == container)) return &d;
  // Not found: a record no expectation matches, so that a missing definition fails instead of crashing.
  static definition missing;
  missing = definition{};
  missing.name = "<missing " + name + ">";
  missing.kind = static_cast<definition_kind>(99);
  missing.container = "<missing>";
  missing.doc = "<missing>";
  missing.signature = "<missing>";
  return &missing;
}

std::vector<std::string> modules(const file_definitions& f) {
  std::vector<std::string> out;
  for (const auto& i : f.imports) out.push_back(i.module);
  return out;
}

}  // namespace

TEST(DefinitionExtract, Python) {
  EXTRACT("python", R"(import os, sys as system
from .util import helper, other as o
from ..pkg.mod import Thing
from . import sibling

MAX_RETRIES = 3
counter = 0

# Adds numbers.
def add(a: int, b: int) -> int:
    return a + b

@dataclass
class Point(Base):
    """A point in the plane.

    More text."""
    x: int = 0
    ORIGIN = None

    def norm(self) -> float:
        '''Euclidean length.'''
        def inner():
            pass
        return 0.0
)");
  const definition* add = find(got, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->kind, definition_kind::function);
  EXPECT_EQ(add->signature, "def add(a: int, b: int) -> int:");
  EXPECT_EQ(add->doc, "Adds numbers.");
  EXPECT_EQ(add->line, 9u);
  const definition* point = find(got, "Point");
  ASSERT_NE(point, nullptr);
  EXPECT_EQ(point->kind, definition_kind::class_type);
  EXPECT_EQ(point->signature, "class Point(Base):");
  EXPECT_EQ(point->doc, "A point in the plane.");
  const definition* norm = find(got, "norm");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->kind, definition_kind::method);
  EXPECT_EQ(norm->container, "Point");
  EXPECT_EQ(norm->doc, "Euclidean length.");
  EXPECT_EQ(find(got, "inner")->name, "<missing inner>");  // function bodies are not entered
  ASSERT_NE(find(got, "MAX_RETRIES"), nullptr);
  EXPECT_EQ(find(got, "MAX_RETRIES")->kind, definition_kind::constant);
  EXPECT_EQ(find(got, "counter")->kind, definition_kind::variable);
  ASSERT_NE(find(got, "ORIGIN", "Point"), nullptr);
  EXPECT_EQ(find(got, "ORIGIN")->kind, definition_kind::field);
  EXPECT_EQ(modules(got), (std::vector<std::string>{"os", "sys", ".util", "..pkg.mod", "."}));
  EXPECT_EQ(got.imports[2].names, (std::vector<std::string>{"helper", "other"}));
  EXPECT_EQ(got.imports[4].names, (std::vector<std::string>{"sibling"}));
}

TEST(DefinitionExtract, TypeScript) {
  EXTRACT("typescript", R"(import { parse, format as fmt } from "./util";
import Default, * as all from '../lib/index.js';
export { thing } from "./thing";
const fs = require("fs");

/** Greets someone. */
export function greet(name: string): string {
  function nested() {}
  return "hi " + name;
}

export const MAX = 10;
export const double = (x: number): number => x * 2;

export interface Shape {
  area(): number;
  name: string;
}

export type Id = string | number;
enum Color { Red, Green }

namespace Geometry {
  export class Circle implements Shape {
    radius = 1;
    // The area.
    area(): number { return 3.14 * this.radius ** 2; }
  }
}
)");
  const definition* greet = find(got, "greet");
  ASSERT_NE(greet, nullptr);
  EXPECT_EQ(greet->signature, "export function greet(name: string): string");
  EXPECT_EQ(greet->doc, "Greets someone.");
  EXPECT_EQ(find(got, "nested")->name, "<missing nested>");
  EXPECT_EQ(find(got, "MAX")->kind, definition_kind::constant);
  EXPECT_EQ(find(got, "double")->kind, definition_kind::function);
  EXPECT_EQ(find(got, "Shape")->kind, definition_kind::type);
  ASSERT_NE(find(got, "area", "Shape"), nullptr);
  EXPECT_EQ(find(got, "Id")->kind, definition_kind::type);
  EXPECT_EQ(find(got, "Color")->kind, definition_kind::type);
  const definition* circle = find(got, "Circle");
  ASSERT_NE(circle, nullptr);
  EXPECT_EQ(circle->container, "Geometry");
  const definition* area = find(got, "area", "Circle");
  ASSERT_NE(area, nullptr);
  EXPECT_EQ(area->kind, definition_kind::method);
  EXPECT_EQ(area->doc, "The area.");
  EXPECT_EQ(modules(got), (std::vector<std::string>{"./util", "../lib/index.js", "./thing", "fs"}));
  EXPECT_EQ(got.imports[0].names, (std::vector<std::string>{"parse", "format"}));
}

TEST(DefinitionExtract, JavaScript) {
  EXTRACT("javascript", R"(const path = require('path');
import x from "./x.js";
// Makes a widget.
function makeWidget(opts) { return {}; }
class Widget extends Base {
  constructor(a) { super(); }
  render() {}
}
module.exports = { makeWidget };
)");
  EXPECT_EQ(find(got, "makeWidget")->doc, "Makes a widget.");
  EXPECT_EQ(find(got, "render", "Widget")->kind, definition_kind::method);
  EXPECT_EQ(modules(got), (std::vector<std::string>{"path", "./x.js"}));
}

TEST(DefinitionExtract, CAndCpp) {
  {
    EXTRACT("c", R"(#include "util.h"
#include <stdio.h>
#define BUF_SIZE 256
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A buffer. */
struct buffer {
  char* data;
  int len;
};
typedef struct buffer buffer_t;
enum mode { MODE_A, MODE_B };

/// Appends to the buffer.
int buffer_append(struct buffer* b, const char* s);

static int helper(int x) {
  int local = 0;
  return x + local;
}
)");
    EXPECT_EQ(modules(got), (std::vector<std::string>{"util.h", "stdio.h"}));
    EXPECT_EQ(find(got, "BUF_SIZE")->kind, definition_kind::constant);
    EXPECT_EQ(find(got, "MAX")->kind, definition_kind::function);
    EXPECT_EQ(find(got, "buffer")->kind, definition_kind::class_type);
    EXPECT_EQ(find(got, "buffer")->doc, "A buffer.");
    EXPECT_EQ(find(got, "len", "buffer")->kind, definition_kind::field);
    EXPECT_EQ(find(got, "buffer_t")->kind, definition_kind::type);
    EXPECT_EQ(find(got, "MODE_B")->container, "mode");
    const definition* append = find(got, "buffer_append");
    ASSERT_NE(append, nullptr);
    EXPECT_EQ(append->signature, "int buffer_append(struct buffer* b, const char* s);");
    EXPECT_EQ(append->doc, "Appends to the buffer.");
    EXPECT_EQ(find(got, "helper")->signature, "static int helper(int x)");
    EXPECT_EQ(find(got, "local")->name, "<missing local>");
  }
  {
    EXTRACT("cpp", R"(#include "shape.hpp"
namespace geo {
// A shape.
class Shape {
 public:
  virtual ~Shape();
  virtual double area() const = 0;
  int sides() const { return n_; }
 private:
  int n_ = 0;
};
using shape_ptr = Shape*;
template <typename T>
T clamp(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }
}  // namespace geo

double geo::Shape::area() const { return 0; }
)");
    EXPECT_EQ(find(got, "Shape")->container, "geo");
    EXPECT_EQ(find(got, "Shape")->doc, "A shape.");
    EXPECT_EQ(find(got, "area", "Shape")->kind, definition_kind::method);
    EXPECT_EQ(find(got, "sides", "Shape")->kind, definition_kind::method);
    EXPECT_EQ(find(got, "shape_ptr")->kind, definition_kind::type);
    const definition* clamp = find(got, "clamp");
    ASSERT_NE(clamp, nullptr);
    EXPECT_EQ(clamp->signature, "template <typename T>\nT clamp(T v, T lo, T hi)");
    EXPECT_EQ(find(got, "area", "geo::Shape")->kind, definition_kind::method);  // out-of-class definition
    EXPECT_EQ(modules(got), (std::vector<std::string>{"shape.hpp"}));
  }
}

TEST(DefinitionExtract, Go) {
  EXTRACT("go", R"(package shapes

import (
	"fmt"
	m "example.com/mod/mathx"
)

// MaxSides is the most sides.
const MaxSides = 12

// Square is a square.
type Square struct {
	Side float64
}

type Shape interface {
	Area() float64
}

// Area of the square.
func (s *Square) Area() float64 {
	return s.Side * s.Side
}

func New(side float64) *Square { return &Square{side} }
)");
  EXPECT_EQ(modules(got), (std::vector<std::string>{"fmt", "example.com/mod/mathx"}));
  EXPECT_EQ(find(got, "MaxSides")->kind, definition_kind::constant);
  EXPECT_EQ(find(got, "MaxSides")->doc, "MaxSides is the most sides.");
  const definition* sq = find(got, "Square");
  ASSERT_NE(sq, nullptr);
  EXPECT_EQ(sq->kind, definition_kind::class_type);
  EXPECT_EQ(sq->signature, "type Square struct");
  EXPECT_EQ(sq->doc, "Square is a square.");
  EXPECT_EQ(find(got, "Shape")->kind, definition_kind::type);
  const definition* area = find(got, "Area", "Square");
  ASSERT_NE(area, nullptr);
  EXPECT_EQ(area->kind, definition_kind::method);
  EXPECT_EQ(area->signature, "func (s *Square) Area() float64");
  EXPECT_EQ(find(got, "New")->kind, definition_kind::function);
}

TEST(DefinitionExtract, Rust) {
  EXTRACT("rust", R"(use std::collections::HashMap;
use crate::geo::{Point, Line};
mod util;

/// A 2D vector.
#[derive(Debug)]
pub struct Vec2 { x: f32, y: f32 }

pub const ORIGIN: Vec2 = Vec2 { x: 0.0, y: 0.0 };

pub trait Shape {
    fn area(&self) -> f32;
}

impl Vec2 {
    /// Length of the vector.
    pub fn len(&self) -> f32 { (self.x * self.x + self.y * self.y).sqrt() }
}

pub enum Dir { Up, Down }
macro_rules! square { ($x:expr) => { $x * $x }; }
fn free() {}
)");
  EXPECT_EQ(modules(got), (std::vector<std::string>{"std::collections", "crate::geo", "util"}));
  EXPECT_EQ(got.imports[1].names, (std::vector<std::string>{"Point", "Line"}));
  EXPECT_EQ(find(got, "Vec2")->doc, "A 2D vector.");  // the attribute line is skipped
  EXPECT_EQ(find(got, "Vec2")->kind, definition_kind::class_type);
  EXPECT_EQ(find(got, "ORIGIN")->kind, definition_kind::constant);
  EXPECT_EQ(find(got, "area", "Shape")->kind, definition_kind::method);
  const definition* len = find(got, "len", "Vec2");
  ASSERT_NE(len, nullptr);
  EXPECT_EQ(len->kind, definition_kind::method);
  EXPECT_EQ(len->signature, "pub fn len(&self) -> f32");
  EXPECT_EQ(len->doc, "Length of the vector.");
  EXPECT_EQ(find(got, "Dir")->kind, definition_kind::type);
  EXPECT_EQ(find(got, "square")->kind, definition_kind::function);
  EXPECT_EQ(find(got, "util")->kind, definition_kind::module);
  EXPECT_EQ(find(got, "free")->container, "");
}

TEST(DefinitionExtract, Java) {
  EXTRACT("java", R"(package com.example;

import java.util.List;
import com.example.util.*;
import static java.lang.Math.max;

/**
 * A greeter.
 */
public class Greeter {
  public static final int LIMIT = 3;
  private String name;

  /** Makes one. */
  public Greeter(String name) { this.name = name; }

  @Override
  public String toString() { return name; }

  interface Listener { void on(); }
}
)");
  EXPECT_EQ(modules(got), (std::vector<std::string>{"java.util.List", "com.example.util", "java.lang.Math.max"}));
  EXPECT_EQ(find(got, "Greeter", "")->doc, "A greeter.");
  EXPECT_EQ(find(got, "LIMIT")->kind, definition_kind::constant);
  EXPECT_EQ(find(got, "name")->kind, definition_kind::field);
  EXPECT_EQ(find(got, "Greeter", "Greeter")->doc, "Makes one.");
  EXPECT_EQ(find(got, "toString")->kind, definition_kind::method);
  EXPECT_EQ(find(got, "on", "Listener")->kind, definition_kind::method);
}

TEST(DefinitionExtract, BoundsAndDeepNesting) {
  // A long header is cut at the limit on a character boundary; definitions per file are capped.
  std::string src = "def f(" + std::string(400, 'a') + "\xC3\xA9" + "):\n    pass\n";
  for (int i = 0; i < 50; ++i) src += "def g" + std::to_string(i) + "():\n    pass\n";
  const syntax_language* language = syntax_language_named("python");
  if (!language) GTEST_SKIP() << "python grammar not built";
  syntax_document sd(*language);
  sd.reset(std::make_shared<const document>("file:///x", "python", 0, src));
  ASSERT_EQ(sd.parse(parse_limits{}), parse_status::parsed);
  extract_limits limits;
  limits.max_definitions = 10;
  const file_definitions got = extract_definitions(sd.tree(), *language, src, limits);
  EXPECT_EQ(got.definitions.size(), 10u);
  EXPECT_LE(got.definitions[0].signature.size(), limits.max_signature_bytes);

  // 100,000 nested brackets: the walk keeps its own stack.
  for (const char* lang : {"python", "javascript", "cpp", "rust"}) {
    const syntax_language* l = syntax_language_named(lang);
    if (!l) continue;
    std::string deep = "x = " + std::string(100000, '[') + std::string(100000, ']') + "\n";
    if (std::string_view(lang) != "python") deep = "int x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + ";\n";
    syntax_document d(*l);
    d.reset(std::make_shared<const document>("file:///deep", lang, 0, deep));
    parse_limits pl;
    pl.budget = std::chrono::seconds(30);
    if (d.parse(pl) != parse_status::parsed) continue;
    const file_definitions f = extract_definitions(d.tree(), *l, deep);
    EXPECT_LE(f.definitions.size(), 2u) << lang;
  }
}

// Real code in quantity: every source file of this repository that has a
// grammar. A C++ construct here once had a declarator without its "name"
// field, and reading the missing field's text crashed the extractor.
TEST(DefinitionExtract, EverySourceFileOfThisRepository) {
  namespace fs = std::filesystem;
  std::size_t files = 0, defs = 0;
  bool found_index = false;
  for (const char* top : {"indexing", "inference", "lsp", "server", "editors", "tests", "bench"}) {
    const fs::path root = fs::path(QUICKFILL_SOURCE_DIR) / top;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->path().filename() == "node_modules") {  // npm packages: not this repository's sources
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file() || it->file_size() > (1u << 20)) continue;
      const std::string uri = "file://" + it->path().string();
      const syntax_language* language = find_syntax_language("", uri);
      if (!language) continue;
      std::ifstream in(it->path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      syntax_document sd(*language);
      sd.reset(std::make_shared<const document>(uri, std::string(language->name), 0, std::move(text)));
      if (sd.parse(parse_limits{}) != parse_status::parsed) continue;
      const file_definitions got = extract_definitions(sd.tree(), *language, sd.current()->text);
      ++files;
      defs += got.definitions.size();
      if (it->path().filename() == "workspace_index.h")
        for (const auto& d : got.definitions) found_index |= d.name == "workspace_index";
    }
  }
  if (files == 0) GTEST_SKIP() << "no grammar for the repository's languages";
  EXPECT_GT(files, 100u);
  EXPECT_GT(defs, files);
  EXPECT_TRUE(found_index || !syntax_language_named("cpp"));
}
