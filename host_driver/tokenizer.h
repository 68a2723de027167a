// Text <-> ids for `n3 run --tokenizer tokenizer.model --prompt "text"`: a thin
// wrapper over SentencePiece (Debian's libsentencepiece-dev), which is the
// format of Gemma's tokenizer.model. Gemma's ids: <pad> 0, <eos> 1, <bos> 2,
// <end_of_turn> 106; generation stops at EOS or <end_of_turn>.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace n3::host {

class Tokenizer {
 public:
  // Loads a SentencePiece model; throws n3::Error naming the file.
  explicit Tokenizer(const std::string& model_path);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // The ids of `text`, without BOS.
  std::vector<int> encode(const std::string& text) const;
  // The prompt as the model sees it: BOS, then encode(text). Throws when the
  // model has no BOS piece.
  std::vector<int> encode_prompt(const std::string& text) const;
  // The text of `ids`; control pieces (BOS, EOS, pad) decode to nothing.
  // Throws n3::Error when an id is outside the vocabulary.
  std::string decode(const std::vector<int>& ids) const;

  int vocab_size() const;
  int bos_id() const;  // -1 when the model has none
  int eos_id() const;  // -1 when the model has none
  // The id of `piece`, or -1 when the vocabulary lacks it.
  int piece_to_id(const std::string& piece) const;
  // EOS and <end_of_turn>, those the model has: SamplerConfig::stop_ids.
  std::vector<int> stop_ids() const;
  const std::string& path() const { return path_; }

 private:
  void check_ids(const std::vector<int>& ids) const;

  std::string path_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

// Prints generated text as the ids come. A piece alone can decode differently
// from the same piece in context (SentencePiece drops a leading space only at
// the start of the text; byte-fallback pieces of one UTF-8 character decode
// to U+FFFD until the character is complete), so each push decodes the whole
// output and returns the new part, holding back a trailing U+FFFD that a later
// byte may complete.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tok) : tok_(tok) {}
  // The text that `id` adds; may be empty.
  std::string push(int id);
  // What push held back (call once at the end).
  std::string finish();

 private:
  const Tokenizer& tok_;
  std::vector<int> ids_;
  std::string emitted_;
};

}  // namespace n3::host
