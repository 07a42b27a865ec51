package dev.fairway.lb.kubernetes.fake;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** The JSON the fake would store for a spec, for unit tests of the parser. */
public final class FakeShapes {
  private FakeShapes() {}

  public static ObjectNode json(EndpointSliceSpec spec, String namespace) {
    ObjectNode o = spec.toJson(namespace);
    ((ObjectNode) o.path("metadata")).put("resourceVersion", "1");
    return o;
  }
}
