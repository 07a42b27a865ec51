package dev.fairway.lb.consul;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One reading of the datacenter's LAN coordinates ({@code /v1/coordinate/nodes}) together with the
 * local agent's node ({@code /v1/agent/self}): answers "how far is node X from this agent?".
 *
 * <p>Segments follow Consul's own rule ({@code lib.CoordinateSet.Intersect}): each node has one
 * coordinate per network segment it is in (a server is in all of them). Two nodes are compared in the
 * default segment {@code ""}, unless one of them is in exactly one segment, whose coordinates are then
 * used. A node without a usable coordinate in that segment is unknown.
 *
 * <p>The agent's own coordinate is taken from the catalog like every other node's, as Consul's
 * {@code ?near=_agent} sort does, so that all the coordinates compared come from one reply; the
 * coordinate {@code /v1/agent/self} reported fills in only while the catalog has none for the agent's node
 * (an agent that just joined).
 *
 * <p>Estimates are rounded to {@link #QUANTUM_NANOS} (0.1 ms): Vivaldi coordinates move by tens of
 * microseconds from one update to the next, well below their own accuracy, and every such move would
 * otherwise be a changed target and a snapshot rebuild in every balancer. 0.1 ms still orders nodes in
 * one rack apart from nodes in another zone (typically 0.2–2 ms apart).
 *
 * <p>Immutable and thread-safe.
 */
final class NetworkCoordinates {
  static final long QUANTUM_NANOS = 100_000;

  /** A catalog entry that is not used, and why; logged by the watch, counted by each source it touches. */
  record Skip(String node, String segment, String reason, String detail) {}

  private final String agentNode;
  private final String agentDatacenter;
  private final Map<String, Map<String, NetworkCoordinate>> byNode;
  private final Map<String, Skip> skippedByNode;
  private final List<Skip> skipped;

  private NetworkCoordinates(String agentNode, String agentDatacenter,
      Map<String, Map<String, NetworkCoordinate>> byNode, List<Skip> skipped) {
    this.agentNode = agentNode;
    this.agentDatacenter = agentDatacenter;
    this.byNode = byNode;
    this.skipped = List.copyOf(skipped);
    Map<String, Skip> first = new HashMap<>();
    for (Skip s : skipped) {
      first.putIfAbsent(s.node(), s);
    }
    this.skippedByNode = Map.copyOf(first);
  }

  /**
   * Builds a reading from the parsed {@code /v1/coordinate/nodes} array (the caller has checked it is
   * one). Entries are read one by one: an entry without a node name is skipped as {@code incomplete},
   * a malformed coordinate as {@code coordinate_malformed}, a vector whose length differs from the
   * agent's as {@code coordinate_dimensions}; the others are used.
   *
   * @param self the agent's node, its segment and the coordinate it reported (may be null)
   */
  static NetworkCoordinates of(AgentSelf self, JsonNode entries) {
    Map<String, Map<String, NetworkCoordinate>> byNode = new HashMap<>();
    List<Skip> skipped = new ArrayList<>();
    List<String[]> keys = new ArrayList<>(); // node, segment of each parsed coordinate, in reply order
    List<NetworkCoordinate> parsed = new ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      JsonNode e = entries.get(i);
      String node = text(e.path("Node"));
      String segment = text(e.path("Segment"));
      if (!e.isObject() || node.isEmpty()) {
        skipped.add(new Skip("#" + i, segment, "incomplete", "entry " + i + " lacks Node"));
        continue;
      }
      NetworkCoordinate.Parsed p = NetworkCoordinate.parse(e.path("Coord"));
      NetworkCoordinate c = p.coordinate();
      if (c == null) {
        skipped.add(new Skip(node, segment, String.valueOf(p.problem()), p.detail()));
        continue;
      }
      keys.add(new String[] {node, segment});
      parsed.add(c);
    }
    // The agent's dimensionality is the reference: a vector of another length cannot be compared with it.
    int dims = referenceDimensions(self, keys, parsed);
    for (int i = 0; i < parsed.size(); i++) {
      String node = keys.get(i)[0];
      String segment = keys.get(i)[1];
      NetworkCoordinate c = parsed.get(i);
      if (dims > 0 && c.dimensions() != dims) {
        skipped.add(new Skip(node, segment, "coordinate_dimensions",
            "Coord.Vec has " + c.dimensions() + " dimensions, the agent's has " + dims));
        continue;
      }
      byNode.computeIfAbsent(node, n -> new HashMap<>()).put(segment, c);
    }
    NetworkCoordinate own = self.coordinate();
    if (own != null && (dims == 0 || own.dimensions() == dims)) {
      byNode.computeIfAbsent(self.node(), n -> new HashMap<>()).putIfAbsent(self.segment(), own);
    }
    Map<String, Map<String, NetworkCoordinate>> frozen = new HashMap<>();
    byNode.forEach((n, m) -> frozen.put(n, Map.copyOf(m)));
    return new NetworkCoordinates(self.node(), self.datacenter(), Map.copyOf(frozen), skipped);
  }

  private static int referenceDimensions(AgentSelf self, List<String[]> keys, List<NetworkCoordinate> parsed) {
    for (int i = 0; i < parsed.size(); i++) {
      if (keys.get(i)[0].equals(self.node())) {
        return parsed.get(i).dimensions();
      }
    }
    NetworkCoordinate own = self.coordinate();
    return own == null ? 0 : own.dimensions();
  }

  /** The agent's node name ({@code Config.NodeName}). */
  String agentNode() {
    return agentNode;
  }

  /** The agent's datacenter ({@code Config.Datacenter}): LAN coordinates mean nothing outside it. */
  String agentDatacenter() {
    return agentDatacenter;
  }

  /** Every entry of the reply that is not used. */
  List<Skip> skipped() {
    return skipped;
  }

  /**
   * The estimated round-trip time from the agent's node to {@code node} in nanoseconds, rounded to
   * {@link #QUANTUM_NANOS}; -1 if either has no usable coordinate in the segment they share.
   */
  long roundTripNanos(String node) {
    Map<String, NetworkCoordinate> mine = byNode.get(agentNode);
    Map<String, NetworkCoordinate> theirs = byNode.get(node);
    if (mine == null || theirs == null) {
      return -1;
    }
    String segment = "";
    if (mine.size() == 1) {
      segment = mine.keySet().iterator().next();
    }
    if (theirs.size() == 1) {
      segment = theirs.keySet().iterator().next();
    }
    NetworkCoordinate a = mine.get(segment);
    NetworkCoordinate b = theirs.get(segment);
    if (a == null || b == null || !a.compatibleWith(b)) {
      return -1;
    }
    return quantise(a.distanceSeconds(b));
  }

  /**
   * Why {@code node} has no estimate, or null if it has one: {@code agent_coordinate_missing} if the
   * agent's own node has none; the reason of the node's skipped entry; {@code coordinate_other_segment}
   * if it has coordinates, but none in the segment it would be compared in; else
   * {@code coordinate_missing} (the reply had none for it).
   */
  @Nullable String problem(String node) {
    if (roundTripNanos(node) >= 0) {
      return null;
    }
    if (!byNode.containsKey(agentNode)) {
      return "agent_coordinate_missing";
    }
    Skip s = skippedByNode.get(node);
    if (s != null) {
      return s.reason();
    }
    return byNode.containsKey(node) ? "coordinate_other_segment" : "coordinate_missing";
  }

  /** Seconds to whole nanoseconds, rounded to the nearest {@link #QUANTUM_NANOS}. */
  static long quantise(double seconds) {
    double quanta = Math.rint(seconds * 1e9 / QUANTUM_NANOS);
    long maxQuanta = Long.MAX_VALUE / QUANTUM_NANOS;
    return quanta >= maxQuanta ? Long.MAX_VALUE : ((long) quanta) * QUANTUM_NANOS;
  }

  private static String text(JsonNode n) {
    return n.isTextual() ? n.textValue().trim() : "";
  }

  @Override
  public String toString() {
    return "NetworkCoordinates{agent=" + agentNode + ", nodes=" + byNode.size() + ", skipped=" + skipped.size() + "}";
  }
}
