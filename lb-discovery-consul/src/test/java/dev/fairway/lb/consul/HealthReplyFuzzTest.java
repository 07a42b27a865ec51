package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Coverage-guided fuzzing (Jazzer) of what Consul's {@code /v1/health/service/<name>} reply turns
 * into: the mapping of entries to targets, and the whole watch step that reads a reply. In a plain
 * test run each method replays the inputs under {@code HealthReplyFuzzTestInputs/<method>/}; {@code
 * .ci/run} fuzzes each for a bounded time with {@code JAZZER_FUZZ=1}. Inputs are raw bytes read as
 * UTF-8: the seeds are reply bodies as Consul (or a broken proxy) sends them.
 */
class HealthReplyFuzzTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** A well-formed entry the fuzzer's entries are put behind: it must always come out as this target. */
  private static final String GOOD = "{\"Node\":{\"Node\":\"fuzz-good-node\",\"Address\":\"10.9.9.9\"},"
      + "\"Service\":{\"ID\":\"fuzz-good\",\"Service\":\"orders\",\"Address\":\"\",\"Port\":8080,"
      + "\"Meta\":{\"zone\":\"z1\"},\"Weights\":{\"Passing\":7,\"Warning\":1}},"
      + "\"Checks\":[{\"CheckID\":\"serfHealth\",\"Status\":\"passing\"}]}";

  @FuzzTest(maxDuration = "30s")
  void mapper(byte[] input) throws JsonProcessingException {
    JsonNode body;
    try {
      body = JSON.readTree(new String(input, StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      return; // the watch counts it as malformed before any mapping (the watch target below checks that)
    }
    if (body == null || !body.isArray()) {
      return; // likewise refused before mapping
    }
    ArrayNode entries = JSON.createArrayNode();
    entries.add(JSON.readTree(GOOD));
    entries.addAll((ArrayNode) body);

    for (boolean passingOnly : new boolean[] {false, true}) {
      HealthMapper.Mapped m = new HealthMapper("zone", passingOnly).map(entries);
      Set<String> ids = new HashSet<>();
      for (Target t : m.targets()) {
        assertThat(ids.add(t.id())).as("unique id %s", t.id()).isTrue();
        assertThat(t.id()).contains("@");
        assertThat(t.port()).isBetween(1, 65_535);
        assertThat(t.weight()).isBetween(1, Target.MAX_WEIGHT);
        assertThat(t.host()).isNotBlank();
        assertThat(m.nodes()).containsKey(t.id());
        assertThat(!passingOnly || t.healthy()).as("passing-only keeps healthy targets only").isTrue();
      }
      assertThat(m.targets()).isSortedAccordingTo(java.util.Comparator.comparing(Target::id));
      if (!passingOnly) {
        // Entry by entry: each one is either a target or a skip with a reason.
        assertThat(m.targets().size() + m.skipped().size()).isEqualTo(entries.size());
      }
      assertThat(m.skipped()).allSatisfy(s -> assertThat(s.reason()).isIn("incomplete", "no_address", "bad_port",
          "zero_weight", "bad_weight", "duplicate", "bad_address"));
      // Bad entries around it never cost the good one (it comes first, so a later copy is the duplicate).
      Target good = m.targets().stream().filter(t -> t.id().equals("fuzz-good@fuzz-good-node")).findFirst()
          .orElseThrow(() -> new AssertionError("the good entry was lost: " + m.skipped()));
      assertThat(good.host()).isEqualTo("10.9.9.9");
      assertThat(good.port()).isEqualTo(8080);
      assertThat(good.weight()).isEqualTo(7);
      assertThat(good.zone()).isEqualTo("z1");
      assertThat(good.healthy()).isTrue();
    }
  }

  /**
   * The whole step that reads a reply, on fake time: a good reply first, then the fuzzed body under a
   * new index. Whatever the body, the watch never fails unexpectedly, keeps a list, and asks again.
   */
  @FuzzTest(maxDuration = "30s")
  void watch(byte[] input) {
    String body = new String(input, StandardCharsets.UTF_8);
    ScriptedHttp http = new ScriptedHttp();
    ManualScheduler scheduler = new ManualScheduler();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ConsulTargetSource s = TestSupport.fakeTime(http, scheduler).source("orders").closeness(false)
        .meterRegistry(registry).build()) {
      http.ok(10, "[" + GOOD + "]");
      assertThat(s.targets()).hasSize(1);
      int before = http.count();

      http.ok(11, body);

      Counter unexpected = registry.find("fairway.discovery.errors").tag("reason", "unexpected").counter();
      assertThat(unexpected == null ? 0 : unexpected.count()).as("unexpected failures").isZero();
      List<Target> after = s.targets();
      boolean malformed = registry.find("fairway.discovery.errors").counters().stream().anyMatch(c -> c.count() > 0);
      if (malformed) {
        assertThat(after).as("an unreadable reply keeps the last good list").hasSize(1);
      }
      // The loop goes on: a next query went out, or one is scheduled.
      assertThat(http.count() > before || scheduler.pending() > 0).as("the watch asks again").isTrue();
    }
  }
}
