// The SentencePiece wrapper on a tiny model trained here with spm_train
// (Debian's `sentencepiece`), set up like Gemma's tokenizer.model: <pad> 0,
// <eos> 1, <bos> 2, <unk> 3, byte fallback, identity normalisation, no dummy
// prefix, whitespace kept, <start_of_turn> / <end_of_turn> as single pieces.
#include "host_driver/tokenizer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "tests/test_util.h"

// The fixture is named Tokenizer (suite name for --gtest_filter=Tokenizer*),
// so the class under test is always spelled host::Tokenizer.
namespace n3 {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class Tokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(test::temp_dir("spm"));
    // A deterministic corpus of lines drawn from a small word list.
    const char* words[] = {"the",   "quick",  "brown",  "fox",    "jumps",   "over", "lazy",
                           "dog",   "model",  "token",  "sampler", "prompt", "turn", "user",
                           "reply", "memory", "weight", "layer",  "gemma",   "host", "logits"};
    std::ofstream corpus(*dir_ + "/corpus.txt");
    uint32_t x = 12345;
    for (int line = 0; line < 300; ++line) {
      int n = 4 + line % 9;
      for (int w = 0; w < n; ++w) {
        x = x * 1664525u + 1013904223u;  // Numerical Recipes LCG
        corpus << (w ? " " : "") << words[(x >> 16) % 21];
      }
      corpus << (line % 7 == 0 ? " <end_of_turn>\n" : "\n");
    }
    corpus.close();
    std::string cmd =
        "spm_train --input=" + *dir_ + "/corpus.txt --model_prefix=" + *dir_ +
        "/tiny --model_type=bpe --vocab_size=400 --hard_vocab_limit=false --byte_fallback=true"
        " --normalization_rule_name=identity --add_dummy_prefix=false"
        " --remove_extra_whitespaces=false --pad_id=0 --eos_id=1 --bos_id=2 --unk_id=3"
        " '--pad_piece=<pad>' '--eos_piece=<eos>' '--bos_piece=<bos>' '--unk_piece=<unk>'"
        " '--user_defined_symbols=<start_of_turn>,<end_of_turn>'"
        " --num_threads=1 --random_seed=1 >" +
        *dir_ + "/spm_train.log 2>&1";
    int rc = std::system(cmd.c_str());
    if (rc != 0)
      train_error_ = new std::string("spm_train failed (status " + std::to_string(rc) +
                                     "; Debian package `sentencepiece`): " +
                                     read_text(*dir_ + "/spm_train.log"));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete train_error_;
    dir_ = train_error_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(train_error_, nullptr) << *train_error_;
  }
  static std::string model() { return *dir_ + "/tiny.model"; }

  static std::string* dir_;
  static std::string* train_error_;
};

std::string* Tokenizer::dir_ = nullptr;
std::string* Tokenizer::train_error_ = nullptr;

TEST_F(Tokenizer, HasGemmasSpecialIds) {
  host::Tokenizer tok(model());
  EXPECT_EQ(tok.bos_id(), 2);
  EXPECT_EQ(tok.eos_id(), 1);
  EXPECT_GT(tok.vocab_size(), 256);  // bytes + specials + merges
  int eot = tok.piece_to_id("<end_of_turn>");
  EXPECT_GE(eot, 4);
  EXPECT_EQ(tok.piece_to_id("<no such piece>"), -1);
  EXPECT_EQ(tok.stop_ids(), (std::vector<int>{1, eot}));
  EXPECT_EQ(tok.path(), model());
}

TEST_F(Tokenizer, RoundTripsText) {
  host::Tokenizer tok(model());
  const std::vector<std::string> texts = {
      "the quick brown fox",
      "  leading, trailing and  double spaces  ",
      "lines\nand\ttabs",
      "unseen: naïve café, 東京, 😀",
      "gemma reply<end_of_turn>",
      "",
  };
  for (const std::string& t : texts) {
    std::vector<int> ids = tok.encode(t);
    for (int id : ids) EXPECT_NE(id, 3) << "<unk> in '" << t << "' (byte fallback should cover it)";
    EXPECT_EQ(tok.decode(ids), t) << "ids: " << ::testing::PrintToString(ids);
  }
}

TEST_F(Tokenizer, EndOfTurnIsOnePiece) {
  host::Tokenizer tok(model());
  std::vector<int> ids = tok.encode("user<end_of_turn>");
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), tok.piece_to_id("<end_of_turn>"));
}

TEST_F(Tokenizer, PromptStartsWithBos) {
  host::Tokenizer tok(model());
  std::vector<int> body = tok.encode("the lazy dog");
  std::vector<int> prompt = tok.encode_prompt("the lazy dog");
  ASSERT_EQ(prompt.size(), body.size() + 1);
  EXPECT_EQ(prompt[0], 2);
  EXPECT_EQ(std::vector<int>(prompt.begin() + 1, prompt.end()), body);
  // Control pieces decode to nothing.
  EXPECT_EQ(tok.decode(prompt), "the lazy dog");
  EXPECT_EQ(tok.decode({2, 1, 0}), "");
}

TEST_F(Tokenizer, TextStreamPrintsWholeCharacters) {
  host::Tokenizer tok(model());
  const std::string text = "fox 😀 naïve 東京 dog";
  std::vector<int> ids = tok.encode(text);
  host::TextStream stream(tok);
  std::string printed;
  for (int id : ids) {
    std::string part = stream.push(id);
    EXPECT_EQ(part.find("\xEF\xBF\xBD"), std::string::npos) << "partial character printed: " << part;
    printed += part;
  }
  printed += stream.finish();
  EXPECT_EQ(printed, text);
}

TEST_F(Tokenizer, BadInputNamesTheFile) {
  auto expect_error = [](auto f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no n3::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::string missing = *dir_ + "/missing.model";
  expect_error([&] { host::Tokenizer t(missing); }, missing);
  std::string junk = *dir_ + "/junk.model";
  std::ofstream(junk) << "not a model";
  expect_error([&] { host::Tokenizer t(junk); }, junk);
  host::Tokenizer tok(model());
  expect_error([&] { tok.decode({5, tok.vocab_size()}); }, "outside its vocabulary");
  expect_error([&] { tok.decode({-1}); }, model());
}

}  // namespace
}  // namespace n3
