package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * One reading: which coordinates are compared (Consul's segment rule, {@code lib.CoordinateSet.Intersect}),
 * where the agent's own coordinate comes from, and why a node has no estimate.
 */
class NetworkCoordinatesTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final String AT_ORIGIN = CoordinateWatchTest.coord(0, 0.0001, 0, 0, 0, 0, 0, 0, 0, 0);
  private static final String ONE_MS = CoordinateWatchTest.coord(0, 0.0001, 0.001, 0, 0, 0, 0, 0, 0, 0);
  private static final String THREE_MS = CoordinateWatchTest.coord(0, 0.0001, 0.003, 0, 0, 0, 0, 0, 0, 0);

  private static String entry(String node, String segment, String coord) {
    return "{\"Node\":\"" + node + "\",\"Segment\":\"" + segment + "\",\"Coord\":" + coord + "}";
  }

  private static NetworkCoordinates reading(AgentSelf self, String... entries) throws Exception {
    return NetworkCoordinates.of(self, JSON.readTree("[" + String.join(",", entries) + "]"));
  }

  private static AgentSelf agent(String segment) {
    return new AgentSelf("agent-one", "dc1", segment, null);
  }

  @Test
  void serverInEverySegment_isComparedInTheClientsOwnSegment() throws Exception {
    // A client of segment "alpha" and a server in both segments: the client's only segment decides.
    NetworkCoordinates c = reading(agent("alpha"), entry("agent-one", "alpha", AT_ORIGIN),
        entry("server-1", "", ONE_MS), entry("server-1", "alpha", THREE_MS));

    assertThat(c.roundTripNanos("server-1")).isEqualTo(3_200_000L);
  }

  @Test
  void nodesOfAnotherSegment_haveNoEstimate_andSaySo() throws Exception {
    NetworkCoordinates c = reading(agent(""), entry("agent-one", "", AT_ORIGIN), entry("n1", "", ONE_MS),
        entry("beta-1", "beta", ONE_MS));

    assertThat(c.roundTripNanos("n1")).isEqualTo(1_200_000L);
    assertThat(c.roundTripNanos("beta-1")).isEqualTo(-1L);
    assertThat(c.problem("beta-1")).isEqualTo("coordinate_other_segment");
    assertThat(c.problem("n1")).isNull();
    assertThat(c.problem("nobody")).isEqualTo("coordinate_missing");
  }

  @Test
  void theAgentsCatalogCoordinate_winsOverTheOneAgentSelfReported() throws Exception {
    NetworkCoordinate fromSelf = NetworkCoordinate.parse(JSON.readTree(THREE_MS)).coordinate();
    AgentSelf self = new AgentSelf("agent-one", "dc1", "", fromSelf);

    assertThat(reading(self, entry("agent-one", "", AT_ORIGIN), entry("n1", "", ONE_MS)).roundTripNanos("n1"))
        .as("one reply, one moment: the catalog's copy").isEqualTo(1_200_000L);
    assertThat(reading(self, entry("n1", "", ONE_MS)).roundTripNanos("n1"))
        .as("no catalog entry yet: agent/self fills in").isEqualTo(2_200_000L);
  }

  @Test
  void agentWithoutAnyCoordinate_makesEveryNodeUnknown_namingTheAgent() throws Exception {
    NetworkCoordinates c = reading(agent(""), entry("n1", "", ONE_MS));

    assertThat(c.roundTripNanos("n1")).isEqualTo(-1L);
    assertThat(c.problem("n1")).isEqualTo("agent_coordinate_missing");
  }

  @Test
  void entriesAreReadOneByOne_andEachBadOneIsListedWithItsReason() throws Exception {
    NetworkCoordinates c = reading(agent(""), entry("agent-one", "", AT_ORIGIN), "{\"Segment\":\"\"}",
        entry("n1", "", "null"), entry("n2", "", "{\"Vec\":\"x\"}"),
        entry("n3", "", CoordinateWatchTest.coord(0, 0, 0.001, 0)), entry("n4", "", ONE_MS), "17");

    assertThat(c.skipped()).extracting(NetworkCoordinates.Skip::node, NetworkCoordinates.Skip::reason)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("#1", "incomplete"),
            org.assertj.core.groups.Tuple.tuple("n1", "coordinate_missing"),
            org.assertj.core.groups.Tuple.tuple("n2", "coordinate_malformed"),
            org.assertj.core.groups.Tuple.tuple("#6", "incomplete"),
            org.assertj.core.groups.Tuple.tuple("n3", "coordinate_dimensions"));
    assertThat(c.roundTripNanos("n4")).isEqualTo(1_200_000L);
    assertThat(c.problem("n3")).isEqualTo("coordinate_dimensions");
  }

  @Test
  void agentSelf_readsNodeDatacenterSegmentAndCoordinate() throws Exception {
    AgentSelf s = AgentSelf.parse(JSON.readTree(CoordinateWatchTest.self("agent-one", "dc7", ONE_MS)));
    assertThat(s.node()).isEqualTo("agent-one");
    assertThat(s.datacenter()).isEqualTo("dc7");
    assertThat(s.segment()).isEmpty();
    assertThat(s.coordinate().dimensions()).isEqualTo(8);

    assertThat(AgentSelf.parse(JSON.readTree("{\"Member\":{\"Name\":\"m1\",\"Tags\":{\"segment\":\"alpha\"}},"
        + "\"Coord\":null}"))).isEqualTo(new AgentSelf("m1", "", "alpha", null));
    assertThat(AgentSelf.parse(JSON.readTree("{\"Config\":{}}"))).isNull();
    assertThat(AgentSelf.parse(JSON.readTree("[]"))).isNull();
  }
}
