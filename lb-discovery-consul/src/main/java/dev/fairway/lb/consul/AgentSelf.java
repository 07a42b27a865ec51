package dev.fairway.lb.consul;

import com.fasterxml.jackson.databind.JsonNode;
import org.jspecify.annotations.Nullable;

/**
 * What {@code GET /v1/agent/self} says about the local agent, as far as closeness needs it: its node name
 * ({@code Config.NodeName}, else {@code Member.Name}), its datacenter ({@code Config.Datacenter}), its
 * network segment ({@code DebugConfig.SegmentName}, else the Serf tag {@code Member.Tags.segment}, else
 * the default segment {@code ""}) and the LAN coordinate it reports ({@code Coord}; null with
 * {@code disable_coordinates}, or when it cannot be read). Immutable.
 */
record AgentSelf(String node, String datacenter, String segment, @Nullable NetworkCoordinate coordinate) {

  /** Reads the reply's JSON; null if it names no node (then nothing can be compared with it). */
  static @Nullable AgentSelf parse(JsonNode self) {
    if (!self.isObject()) {
      return null;
    }
    String node = text(self.path("Config").path("NodeName"));
    if (node.isEmpty()) {
      node = text(self.path("Member").path("Name"));
    }
    if (node.isEmpty()) {
      return null;
    }
    String segment = text(self.path("DebugConfig").path("SegmentName"));
    if (segment.isEmpty()) {
      segment = text(self.path("Member").path("Tags").path("segment"));
    }
    return new AgentSelf(node, text(self.path("Config").path("Datacenter")), segment,
        NetworkCoordinate.parse(self.path("Coord")).coordinate());
  }

  private static String text(JsonNode n) {
    return n.isTextual() ? n.textValue().trim() : "";
  }
}
