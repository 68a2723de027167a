#include "host_driver/tokenizer.h"

#include <sentencepiece_processor.h>

#include <filesystem>

#include "base/error.h"

namespace n3::host {

Tokenizer::Tokenizer(const std::string& model_path)
    : path_(model_path), sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {
  require(!std::filesystem::is_directory(model_path), "tokenizer: " + model_path + " is a directory, not a file");
  require(std::filesystem::is_regular_file(model_path), "tokenizer: no such file " + model_path);
  auto st = sp_->Load(model_path);
  require(st.ok(), "tokenizer: " + model_path + " is not a SentencePiece model (" + st.ToString() + ")");
}

Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(const std::string& text) const {
  std::vector<int> ids;
  auto st = sp_->Encode(text, &ids);
  require(st.ok(), "tokenizer " + path_ + ": cannot encode text (" + st.ToString() + ")");
  return ids;
}

std::vector<int> Tokenizer::encode_prompt(const std::string& text) const {
  require(bos_id() >= 0, "tokenizer " + path_ + ": the model has no BOS piece to start the prompt");
  std::vector<int> ids{bos_id()};
  std::vector<int> rest = encode(text);
  ids.insert(ids.end(), rest.begin(), rest.end());
  return ids;
}

void Tokenizer::check_ids(const std::vector<int>& ids) const {
  for (int id : ids)
    require(id >= 0 && id < vocab_size(), "tokenizer " + path_ + ": id " + std::to_string(id) +
                                              " is outside its vocabulary of " +
                                              std::to_string(vocab_size()) + " pieces");
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  check_ids(ids);
  std::string text;
  auto st = sp_->Decode(ids, &text);
  require(st.ok(), "tokenizer " + path_ + ": cannot decode ids (" + st.ToString() + ")");
  return text;
}

int Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }
int Tokenizer::bos_id() const { return sp_->bos_id(); }
int Tokenizer::eos_id() const { return sp_->eos_id(); }

int Tokenizer::piece_to_id(const std::string& piece) const {
  // PieceToId answers unk_id for a piece it lacks; only the piece itself counts.
  int id = sp_->PieceToId(piece);
  return id >= 0 && id < vocab_size() && sp_->IdToPiece(id) == piece ? id : -1;
}

std::vector<int> Tokenizer::stop_ids() const {
  std::vector<int> ids;
  if (eos_id() >= 0) ids.push_back(eos_id());
  int eot = piece_to_id("<end_of_turn>");
  if (eot >= 0) ids.push_back(eot);
  return ids;
}

namespace {
// UTF-8 of U+FFFD, what SentencePiece writes for an incomplete byte sequence.
const std::string kReplacement = "\xEF\xBF\xBD";
}  // namespace

std::string TextStream::push(int id) {
  ids_.push_back(id);
  std::string full = tok_.decode(ids_);
  size_t end = full.size();
  while (end >= emitted_.size() + kReplacement.size() &&
         full.compare(end - kReplacement.size(), kReplacement.size(), kReplacement) == 0)
    end -= kReplacement.size();
  // Decoding a longer id list only appends to the text (apart from the held
  // back U+FFFD), so emitted_ is a prefix of full and the new part follows it.
  std::string fresh = end > emitted_.size() ? full.substr(emitted_.size(), end - emitted_.size()) : "";
  emitted_ += fresh;
  return fresh;
}

std::string TextStream::finish() {
  std::string full = tok_.decode(ids_);
  std::string rest = full.size() > emitted_.size() ? full.substr(emitted_.size()) : "";
  emitted_ += rest;
  return rest;
}

}  // namespace n3::host
