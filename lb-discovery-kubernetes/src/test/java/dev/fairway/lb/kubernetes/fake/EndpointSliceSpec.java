package dev.fairway.lb.kubernetes.fake;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * An EndpointSlice to store in the {@link FakeKubernetes}, built field by field in the shapes of
 * {@code discovery.k8s.io/v1}: {@code addressType}, {@code endpoints} (addresses, conditions, zone,
 * nodeName, targetRef, hints.forZones) and {@code ports} (name, port, protocol). A field left unset is
 * left out of the JSON, as the API server leaves out nil fields ({@code omitempty}). Not thread-safe.
 */
public final class EndpointSliceSpec {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String name;
  private final String service;
  private String addressType = "IPv4";
  private final List<ObjectNode> endpoints = new ArrayList<>();
  private final ArrayNode ports = JSON.createArrayNode();
  private boolean portsNull;

  private EndpointSliceSpec(String name, String service) {
    this.name = name;
    this.service = service;
  }

  /** A slice named {@code name} of the Service {@code service} (label {@code kubernetes.io/service-name}). */
  public static EndpointSliceSpec of(String name, String service) {
    return new EndpointSliceSpec(name, service);
  }

  public String name() {
    return name;
  }

  public String service() {
    return service;
  }

  /** {@code IPv4} (default), {@code IPv6} or {@code FQDN}. */
  public EndpointSliceSpec addressType(String type) {
    this.addressType = type;
    return this;
  }

  /** A TCP port entry; {@code name} may be "" (an unnamed Service port) and {@code port} null ("all ports"). */
  public EndpointSliceSpec port(String portName, Integer port) {
    return port(portName, port, "TCP");
  }

  public EndpointSliceSpec port(String portName, Integer port, String protocol) {
    ObjectNode p = ports.addObject();
    p.put("name", portName);
    if (port != null) {
      p.put("port", port);
    }
    p.put("protocol", protocol);
    return this;
  }

  /** Writes {@code "ports": null}, as the API server does for a slice without ports. */
  public EndpointSliceSpec noPorts() {
    this.portsNull = true;
    return this;
  }

  public EndpointSliceSpec endpoint(Endpoint e) {
    endpoints.add(e.node);
    return this;
  }

  /** Adds a raw endpoint object (for malformed input). */
  public EndpointSliceSpec rawEndpoint(ObjectNode node) {
    endpoints.add(node);
    return this;
  }

  /** The slice's JSON without metadata.resourceVersion, which the fake sets when it stores it. */
  ObjectNode toJson(String namespace) {
    ObjectNode o = JSON.createObjectNode();
    o.put("kind", "EndpointSlice");
    o.put("apiVersion", "discovery.k8s.io/v1");
    ObjectNode meta = o.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", namespace);
    meta.put("generateName", service + "-");
    ObjectNode labels = meta.putObject("labels");
    labels.put("kubernetes.io/service-name", service);
    labels.put("endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io");
    o.put("addressType", addressType);
    ArrayNode eps = o.putArray("endpoints");
    for (ObjectNode e : endpoints) {
      eps.add(e.deepCopy());
    }
    if (portsNull) {
      o.putNull("ports");
    } else {
      o.set("ports", ports.deepCopy());
    }
    return o;
  }

  /** One endpoint of a slice. */
  public static final class Endpoint {
    final ObjectNode node = JSON.createObjectNode();

    private Endpoint(String address) {
      node.putArray("addresses").add(address);
    }

    /** An endpoint with one address and no conditions (the API's nil: ready). */
    public static Endpoint at(String address) {
      return new Endpoint(address);
    }

    /** A ready Pod's endpoint: conditions ready, serving, not terminating; targetRef to the Pod. */
    public static Endpoint readyPod(String address, String pod, String zone) {
      return at(address).conditions(true, true, false).pod(pod).zone(zone);
    }

    /** The three conditions; a null leaves that condition out (the API's nil). */
    public Endpoint conditions(Boolean ready, Boolean serving, Boolean terminating) {
      ObjectNode c = node.putObject("conditions");
      if (ready != null) {
        c.put("ready", ready);
      }
      if (serving != null) {
        c.put("serving", serving);
      }
      if (terminating != null) {
        c.put("terminating", terminating);
      }
      return this;
    }

    public Endpoint zone(String zone) {
      node.put("zone", zone);
      return this;
    }

    public Endpoint nodeName(String nodeName) {
      node.put("nodeName", nodeName);
      return this;
    }

    /** A targetRef to the Pod {@code name} with a uid derived from it (stable across address families). */
    public Endpoint pod(String name) {
      ObjectNode ref = node.putObject("targetRef");
      ref.put("kind", "Pod");
      ref.put("namespace", "default");
      ref.put("name", name);
      ref.put("uid", "uid-" + name);
      return this;
    }

    /** {@code hints.forZones}: the zones that should use this endpoint. */
    public Endpoint forZones(String... zones) {
      ArrayNode z = node.putObject("hints").putArray("forZones");
      for (String zone : zones) {
        z.addObject().put("name", zone);
      }
      return this;
    }

    /** A copy, to vary one field between two slices. */
    public Endpoint copy() {
      Endpoint e = new Endpoint("x");
      e.node.removeAll();
      e.node.setAll(node.deepCopy());
      return e;
    }
  }
}
