package dev.fairway.lb.kubernetes;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One EndpointSlice as this package reads it: only the fields that decide targets, already checked.
 * Immutable. {@link SliceParser} makes it; {@link EndpointMerge} turns a Service's slices into targets.
 */
record Slice(String name, AddressType addressType, List<Endpoint> endpoints, List<Port> ports) {

  /** The slice's {@code addressType}; {@code FQDN} never gets this far (skipped with a reason). */
  enum AddressType {
    IPV4, IPV6
  }

  /**
   * One entry of the slice's port list. {@code name} is {@code ""} for an unnamed Service port; a
   * null {@code port} means "all ports" (the API's nil); {@code protocol} defaults to {@code TCP}.
   */
  record Port(String name, @Nullable Integer port, String protocol) {}

  /**
   * One endpoint: its first address (the only one the API gives a meaning), the three conditions as sent
   * (null when absent, see the accessors for the API's defaults), its zone, node, Pod and zone hints.
   */
  record Endpoint(String address, @Nullable Boolean readyField, @Nullable Boolean servingField,
      @Nullable Boolean terminatingField, String zone, String nodeName, String podName, String podUid,
      List<String> forZones) {

    /** {@code ready}: a nil value means true (the API's rule, as kube-proxy reads it). */
    boolean ready() {
      return readyField == null || readyField;
    }

    /** {@code serving}: a nil value means the same as {@code ready}. */
    boolean serving() {
      return servingField == null ? ready() : servingField;
    }

    /** {@code terminating}: a nil value means false. */
    boolean terminating() {
      return terminatingField != null && terminatingField;
    }
  }
}
