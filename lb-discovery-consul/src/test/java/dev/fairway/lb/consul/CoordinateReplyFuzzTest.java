package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.charset.StandardCharsets;

/**
 * Coverage-guided fuzzing (Jazzer) of Consul's network-coordinate replies: {@code /v1/coordinate/nodes}
 * into a {@link NetworkCoordinates} reading, and {@code /v1/agent/self} into an {@link AgentSelf}.
 * Plain test runs replay the inputs under {@code CoordinateReplyFuzzTestInputs/<method>/}; {@code
 * .ci/run} fuzzes each for a bounded time with {@code JAZZER_FUZZ=1}. Inputs are raw bytes read as UTF-8.
 */
class CoordinateReplyFuzzTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = CoordinateWatchTest.node("fuzz-agent",
      CoordinateWatchTest.coord(0, 0.0001, 0, 0, 0, 0, 0, 0, 0, 0));
  private static final String GOOD = CoordinateWatchTest.node("fuzz-good-node",
      CoordinateWatchTest.coord(0, 0.0001, 0.003, 0, 0, 0, 0, 0, 0, 0));
  private static final long GOOD_NANOS = 3_200_000; // 3 ms apart plus both heights (0.1 ms each)

  @FuzzTest(maxDuration = "30s")
  void nodes(byte[] input) throws JsonProcessingException {
    JsonNode body;
    try {
      body = JSON.readTree(new String(input, StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      return; // the watch refuses it as malformed before any mapping
    }
    if (body == null || !body.isArray()) {
      return;
    }
    ArrayNode entries = JSON.createArrayNode();
    entries.add(JSON.readTree(AGENT));
    entries.add(JSON.readTree(GOOD));
    entries.addAll((ArrayNode) body);
    boolean namesOurs = false;
    for (JsonNode e : body) {
      String node = e.path("Node").isTextual() ? e.path("Node").textValue().trim() : "";
      namesOurs |= node.equals("fuzz-agent") || node.equals("fuzz-good-node");
    }

    NetworkCoordinates c = NetworkCoordinates.of(new AgentSelf("fuzz-agent", "dc1", "", null), entries);

    for (int i = 0; i < entries.size(); i++) {
      JsonNode e = entries.get(i);
      String node = e.path("Node").isTextual() ? e.path("Node").textValue().trim() : "";
      long rtt = c.roundTripNanos(node);
      assertThat(rtt).as("an estimate is -1 or whole quanta").matches(r -> r == -1
          || (r >= 0 && (r == Long.MAX_VALUE || r % NetworkCoordinates.QUANTUM_NANOS == 0)));
      assertThat(c.problem(node) == null).as("a problem exactly when there is no estimate: %s", node)
          .isEqualTo(rtt >= 0);
    }
    assertThat(c.skipped()).allSatisfy(s -> assertThat(s.reason()).startsWith(s.reason().equals("incomplete")
        ? "incomplete" : "coordinate_"));
    if (!namesOurs) {
      // Bad entries around them never cost the two good ones.
      assertThat(c.roundTripNanos("fuzz-good-node")).isEqualTo(GOOD_NANOS);
    }
  }

  @FuzzTest(maxDuration = "30s")
  void agentSelf(byte[] input) {
    JsonNode body;
    try {
      body = JSON.readTree(new String(input, StandardCharsets.UTF_8));
    } catch (JsonProcessingException e) {
      return;
    }
    if (body == null) {
      return;
    }
    AgentSelf self = AgentSelf.parse(body);
    if (self != null) {
      assertThat(self.node()).isNotBlank();
      assertThat(self.node()).isEqualTo(self.node().trim());
      // Whatever the agent said about itself, a reading built on it answers without throwing.
      NetworkCoordinates c = NetworkCoordinates.of(self, JSON.createArrayNode());
      assertThat(c.roundTripNanos(self.node())).isGreaterThanOrEqualTo(-1);
    }
  }
}
