package dev.fairway.lb.consul.fake;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One service instance to register in a {@link FakeConsul}, rendered in the shape of a real
 * {@code /v1/health/service} entry (Node, Service, Checks with a {@code serfHealth} node check and a
 * {@code service:<id>} check). Immutable; the {@code with*} methods return copies.
 *
 * <p>{@code Instance.of("orders-1", "10.0.0.1", 8080).withTags("v2").withWeights(10, 1)}
 */
public final class Instance {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  final String id;
  final String node;
  final String nodeAddress;
  final String address;
  final Integer port;
  final List<String> tags;
  final Map<String, String> meta;
  final int[] weights; // null = no Weights field
  final String status;
  final String nodeStatus;

  private Instance(String id, String node, String nodeAddress, String address, Integer port, List<String> tags,
      Map<String, String> meta, int[] weights, String status, String nodeStatus) {
    this.id = id;
    this.node = node;
    this.nodeAddress = nodeAddress;
    this.address = address;
    this.port = port;
    this.tags = tags;
    this.meta = meta;
    this.weights = weights;
    this.status = status;
    this.nodeStatus = nodeStatus;
  }

  /** A passing instance on node {@code node-<id>} whose Service.Address is {@code address}. */
  public static Instance of(String id, String address, Integer port) {
    return new Instance(id, "node-" + id, address, address, port, List.of(), Map.of(), new int[] {1, 1},
        "passing", "passing");
  }

  public Instance onNode(String nodeName, String nodeAddr) {
    return new Instance(id, nodeName, nodeAddr, address, port, tags, meta, weights, status, nodeStatus);
  }

  /** Service.Address; {@code ""} makes clients fall back to Node.Address. */
  public Instance withServiceAddress(String serviceAddress) {
    return new Instance(id, node, nodeAddress, serviceAddress, port, tags, meta, weights, status, nodeStatus);
  }

  public Instance withTags(String... newTags) {
    return new Instance(id, node, nodeAddress, address, port, List.of(newTags), meta, weights, status, nodeStatus);
  }

  /** Service.Meta; {@code null} renders {@code "Meta": null} as old agents do. */
  public Instance withMeta(Map<String, String> newMeta) {
    return new Instance(id, node, nodeAddress, address, port, tags, newMeta == null ? null : new LinkedHashMap<>(newMeta),
        weights, status, nodeStatus);
  }

  public Instance withWeights(int passing, int warning) {
    return new Instance(id, node, nodeAddress, address, port, tags, meta, new int[] {passing, warning}, status,
        nodeStatus);
  }

  /** No Weights field at all. */
  public Instance withoutWeights() {
    return new Instance(id, node, nodeAddress, address, port, tags, meta, null, status, nodeStatus);
  }

  /** The service check's status: passing, warning or critical. */
  public Instance withStatus(String serviceStatus) {
    return new Instance(id, node, nodeAddress, address, port, tags, meta, weights, serviceStatus, nodeStatus);
  }

  /** The node's serfHealth check status. */
  public Instance withNodeStatus(String serfStatus) {
    return new Instance(id, node, nodeAddress, address, port, tags, meta, weights, status, serfStatus);
  }

  ObjectNode toJson(String service, String dc, long createIndex) {
    ObjectNode entry = JSON.objectNode();
    ObjectNode n = entry.putObject("Node");
    n.put("ID", UUID.nameUUIDFromBytes(node.getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString());
    n.put("Node", node);
    n.put("Address", nodeAddress);
    n.put("Datacenter", dc);
    ObjectNode ta = n.putObject("TaggedAddresses");
    ta.put("lan", nodeAddress);
    ta.put("wan", nodeAddress);
    n.putObject("Meta").put("consul-network-segment", "");
    n.put("CreateIndex", createIndex);
    n.put("ModifyIndex", createIndex);

    ObjectNode s = entry.putObject("Service");
    s.put("ID", id);
    s.put("Service", service);
    ArrayNode t = s.putArray("Tags");
    tags.forEach(t::add);
    s.put("Address", address);
    if (meta == null) {
      s.putNull("Meta");
    } else {
      ObjectNode m = s.putObject("Meta");
      meta.forEach(m::put);
    }
    if (port == null) {
      s.putNull("Port");
    } else {
      s.put("Port", port);
    }
    if (weights != null) {
      ObjectNode w = s.putObject("Weights");
      w.put("Passing", weights[0]);
      w.put("Warning", weights[1]);
    }
    s.put("EnableTagOverride", false);
    s.put("CreateIndex", createIndex);
    s.put("ModifyIndex", createIndex);

    ArrayNode checks = entry.putArray("Checks");
    checks.add(check(node, "serfHealth", "Serf Health Status", nodeStatus, "", "", List.of()));
    checks.add(check(node, "service:" + id, "Service '" + service + "' check", status, id, service, tags));
    return entry;
  }

  static ObjectNode check(String node, String checkId, String name, String status, String serviceId,
      String serviceName, List<String> serviceTags) {
    ObjectNode c = JSON.objectNode();
    c.put("Node", node);
    c.put("CheckID", checkId);
    c.put("Name", name);
    c.put("Status", status);
    c.put("Notes", "");
    c.put("Output", "");
    c.put("ServiceID", serviceId);
    c.put("ServiceName", serviceName);
    ArrayNode t = c.putArray("ServiceTags");
    serviceTags.forEach(t::add);
    return c;
  }
}
