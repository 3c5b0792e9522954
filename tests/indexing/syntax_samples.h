// Small realistic sources per grammar, and code-ish fragments to type into
// them, for the syntax tests and the parse benchmark.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qf::test {

struct syntax_sample {
  std::string_view grammar;      // syntax_language name
  std::string_view language_id;  // LSP id
  std::string_view uri;
  std::string_view source;
};

inline const std::vector<syntax_sample>& syntax_samples() {
  static const std::vector<syntax_sample> samples = {
      {"python", "python", "file:///w/sample.py", R"PY(import os
from typing import Optional

class Cache:
    """A tiny cache."""

    def __init__(self, limit: int = 16) -> None:
        self.limit = limit
        self.items: dict[str, bytes] = {}

    def get(self, key: str) -> Optional[bytes]:
        value = self.items.get(key)
        if value is None:
            return None
        return value

    def put(self, key, value):
        while len(self.items) >= self.limit:
            self.items.pop(next(iter(self.items)))
        self.items[key] = value  # café ☕


def main(argv):
    c = Cache(limit=int(os.environ.get("N", "4")))
    for i, arg in enumerate(argv[1:]):
        c.put(arg, f"{i}: {arg!r}".encode())
    print([k for k in c.items if k.startswith("x")], {"日本": 1})
    return 0
)PY"},
      {"javascript", "javascript", "file:///w/sample.js", R"JS('use strict';
const fs = require('fs');

class Queue {
  constructor(limit = 8) {
    this.limit = limit;
    this.items = [];
  }
  push(item) {
    if (this.items.length >= this.limit) this.items.shift();
    this.items.push(item);
    return this;
  }
}

async function load(path) {
  const text = await fs.promises.readFile(path, 'utf8');
  return text.split(/\r?\n/).filter((line) => line.length > 0);
}

export default function main(args) {
  const q = new Queue(4);
  for (const [i, a] of args.entries()) q.push(`${i}: ${a} — ok`);
  return { count: q.items.length, first: q.items[0] ?? null };
}
)JS"},
      {"typescript", "typescript", "file:///w/sample.ts", R"TS(import { readFile } from "fs/promises";

export interface Entry<T> {
  key: string;
  value: T;
  readonly at: number;
}

type Mode = "fast" | "safe";

export class Store<T> {
  private entries = new Map<string, Entry<T>>();
  constructor(private readonly mode: Mode = "safe") {}

  set(key: string, value: T): void {
    this.entries.set(key, { key, value, at: Date.now() });
  }

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }
}

export async function load(path: string): Promise<Store<string>> {
  const s = new Store<string>("fast");
  const text = await readFile(path, "utf8");
  text.split("\n").forEach((line, i) => s.set(`${i}`, line as string)); // naïve
  return s;
}
)TS"},
      {"tsx", "typescriptreact", "file:///w/sample.tsx", R"TSX(import React, { useState } from "react";

type Props = { title: string; items: string[] };

export function List({ title, items }: Props) {
  const [open, setOpen] = useState<boolean>(true);
  return (
    <section className="list">
      <h2 onClick={() => setOpen(!open)}>{title} ✓</h2>
      {open && (
        <ul>
          {items.map((item, i) => (
            <li key={i}>{item}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
)TSX"},
      {"c", "c", "file:///w/sample.c", R"C(#include <stdio.h>
#include <stdlib.h>

#define LIMIT 16

struct node {
  int value;
  struct node *next;
};

static struct node *push(struct node *head, int value) {
  struct node *n = malloc(sizeof *n);
  if (!n) return head;
  n->value = value;
  n->next = head;
  return n;
}

int main(int argc, char **argv) {
  struct node *list = NULL;
  for (int i = 1; i < argc && i < LIMIT; ++i) list = push(list, atoi(argv[i]));
  while (list) {
    printf("%d \u00e9\n", list->value); /* é */
    struct node *next = list->next;
    free(list);
    list = next;
  }
  return 0;
}
)C"},
      {"cpp", "cpp", "file:///w/sample.cpp", R"CPP(#include <map>
#include <string>
#include <vector>

namespace demo {

template <typename T>
class ring {
 public:
  explicit ring(std::size_t n) : items_(n) {}
  void push(const T& v) {
    items_[head_++ % items_.size()] = v;
  }
  const T& operator[](std::size_t i) const { return items_[i % items_.size()]; }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace demo

int main(int argc, char** argv) {
  demo::ring<std::string> r(4);
  std::map<std::string, int> counts;
  for (int i = 1; i < argc; ++i) {
    r.push(argv[i]);
    ++counts[argv[i]];  // “quoted”
  }
  auto sum = [&counts]() { int s = 0; for (auto& [k, v] : counts) s += v; return s; };
  return sum() > 0 ? 0 : 1;
}
)CPP"},
      {"go", "go", "file:///w/sample.go", R"GO(package main

import (
	"fmt"
	"strings"
)

type Cache struct {
	limit int
	items map[string]string
}

func NewCache(limit int) *Cache {
	return &Cache{limit: limit, items: make(map[string]string)}
}

func (c *Cache) Put(k, v string) error {
	if len(c.items) >= c.limit {
		return fmt.Errorf("full: %d", c.limit)
	}
	c.items[k] = v
	return nil
}

func main() {
	c := NewCache(2)
	for i, w := range strings.Fields("a b c ü") {
		if err := c.Put(w, fmt.Sprint(i)); err != nil {
			fmt.Println(err)
		}
	}
}
)GO"},
      {"rust", "rust", "file:///w/sample.rs", R"RS(use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct Cache<'a> {
    limit: usize,
    items: HashMap<&'a str, Vec<u8>>,
}

impl<'a> Cache<'a> {
    pub fn new(limit: usize) -> Self {
        Cache { limit, items: HashMap::new() }
    }

    pub fn put(&mut self, key: &'a str, value: &[u8]) -> Result<(), String> {
        if self.items.len() >= self.limit {
            return Err(format!("full: {}", self.limit));
        }
        self.items.insert(key, value.to_vec());
        Ok(())
    }
}

fn main() {
    let mut c = Cache::new(2);
    for (i, w) in "a b c ß".split(' ').enumerate() {
        match c.put(w, &[i as u8]) {
            Ok(()) => println!("ok {w}"),
            Err(e) => eprintln!("{e}"),
        }
    }
}
)RS"},
      {"java", "java", "file:///w/Sample.java", R"JAVA(package demo;

import java.util.ArrayList;
import java.util.List;

public final class Sample {
    private final List<String> items = new ArrayList<>();
    private final int limit;

    public Sample(int limit) {
        this.limit = limit;
    }

    public boolean add(String item) {
        if (items.size() >= limit) {
            return false;
        }
        return items.add(item);
    }

    public static void main(String[] args) {
        Sample s = new Sample(3);
        for (String a : args) {
            if (!s.add(a)) System.out.println("full: " + a + " ✗");
        }
    }
}
)JAVA"},
  };
  return samples;
}

// Fragments typed into samples: tokens, brackets, strings, newlines with
// indentation, and multi-byte UTF-8 (2-, 3- and 4-byte sequences).
inline const std::vector<std::string>& code_fragments() {
  static const std::vector<std::string> f = {
      "x",  "value", "self.", "->", "::", ".", ",", ";", ":", "=", "==", " + ", "*", "&", "!", "?",
      "(",  ")",     "[",     "]",  "{",  "}", "<", ">", "\"", "'", "`", "/*", "*/", "//", "#",
      "\n", "\n    ", "\n\t", " ", "  ", "if ", "return ", "for (", "def f(a, b):\n    ", "fn g() {", "class C ",
      "int ", "let ", "const ", "\"str\"", "'c'", "42", "3.14", "é", "日本語", "😀", "∑", "“q”", "\r\n",
  };
  return f;
}

}  // namespace qf::test
