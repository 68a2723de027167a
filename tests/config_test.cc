#include <gtest/gtest.h>

#include "golden/model_config.h"
#include "tests/test_util.h"

namespace n3 {

TEST(ModelConfig, ReadsDevFixtureConfigJson) {
  ModelConfig c = load_model_config(test::fixture("gemma3n-dev/hf"));
  EXPECT_EQ(c.hidden, 128);
  EXPECT_EQ(c.layers, 10);
  EXPECT_EQ(c.kv_shared, 4);
  EXPECT_EQ(c.kv_source(6), 5);  // local shared layer reads the last local non-shared layer
  EXPECT_EQ(c.kv_source(9), 4);  // global reads layer 4
  EXPECT_DOUBLE_EQ(c.rope_global, 1e6);
  EXPECT_DOUBLE_EQ(c.rope_local, 1e4);
}

}  // namespace n3
