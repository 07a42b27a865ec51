package dev.fairway.lb.spring;

import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The {@link TargetFeed} of {@code fairway.kubernetes.enabled=true}: one {@link KubernetesTargetSource}
 * per balancer, watching the EndpointSlices of the Kubernetes Service named as the service id, with the
 * connection and port settings of {@link FairwayKubernetesProperties}. Thread-safe.
 */
final class KubernetesTargetFeed implements TargetFeed {
  static final String PREFIX = "fairway.kubernetes.";

  private final FairwayKubernetesProperties properties;
  private final @Nullable MeterRegistry meters;

  KubernetesTargetFeed(FairwayKubernetesProperties properties, @Nullable MeterRegistry meters) {
    this.properties = properties;
    this.meters = meters;
  }

  @Override
  public ServiceFeed open(ServiceSettings settings) {
    KubernetesTargetSource.Builder b;
    try {
      b = KubernetesTargetSource.builder(settings.service);
    } catch (IllegalArgumentException e) {
      throw new FairwayConfigurationException("fairway.kubernetes.enabled", "fairway.kubernetes.enabled: true for"
          + " service \"" + settings.service + "\" (expected: a service id that is a Kubernetes Service name:"
          + " lower-case letters, digits and '-', starting with a letter, at most 63)");
    }
    configure(b, properties);
    // The balancer's own local zone, when fairway.kubernetes.local-zone leaves it open: hints and zone
    // routing then agree on where this application is.
    if (properties.getLocalZone() == null && !settings.localZone.isEmpty()) {
      b.localZone(settings.localZone);
    }
    if (meters != null) {
      b.meterRegistry(meters);
    }
    KubernetesTargetSource source;
    try {
      source = b.build();
    } catch (IllegalArgumentException | IllegalStateException e) {
      // Where the API server is was decided here: in a pod, a kubeconfig, or api-server.
      throw new FairwayConfigurationException(PREFIX + "api-server", PREFIX + "api-server: "
          + properties.getApiServer() + " (" + e.getMessage() + ")");
    }
    return new ServiceFeed(source, null, List.of(source));
  }

  /**
   * The settings of {@code fairway.kubernetes.*} on a builder, each through the builder's own check, its
   * message naming the property. Called at startup on a throwaway builder, so a bad value stops it.
   */
  static KubernetesTargetSource.Builder configure(KubernetesTargetSource.Builder b, FairwayKubernetesProperties p) {
    String namespace = p.getNamespace();
    if (namespace != null) {
      check("namespace", () -> b.namespace(namespace));
    }
    String portName = p.getPortName();
    Integer port = p.getPort();
    if (portName != null && port != null) {
      // Each value's own check first, so a bad one is named as such.
      check("port", () -> KubernetesTargetSource.builder("fairway").port(port));
      check("port-name", () -> KubernetesTargetSource.builder("fairway").portName(portName));
      throw new FairwayConfigurationException(PREFIX + "port", PREFIX + "port: " + port + " set with " + PREFIX
          + "port-name \"" + portName + "\" (expected: one or the other)");
    }
    if (portName != null) {
      check("port-name", () -> b.portName(portName));
    }
    if (port != null) {
      check("port", () -> b.port(port));
    }
    String zone = p.getLocalZone();
    if (zone != null) {
      check("local-zone", () -> b.localZone(zone));
    }
    if (p.isPreferIpv6()) {
      b.preferIpv6();
    }
    String apiServer = p.getApiServer();
    Path tokenFile = p.getTokenFile();
    Path ca = p.getCaCertificate();
    if (apiServer == null && (tokenFile != null || ca != null)) {
      String set = tokenFile != null ? "token-file" : "ca-certificate";
      throw new FairwayConfigurationException(PREFIX + set, PREFIX + set + ": " + (tokenFile != null ? tokenFile : ca)
          + " set without " + PREFIX + "api-server (expected: both; in a pod the service account's are used)");
    }
    if (apiServer != null) {
      check("api-server", () -> b.apiServer(apiServer));
    }
    if (tokenFile != null) {
      check("token-file", () -> b.tokenFile(tokenFile));
    }
    if (ca != null) {
      check("ca-certificate", () -> b.caCertificate(ca));
    }
    return b;
  }

  /** Runs one builder check; its IllegalArgumentException becomes a message naming the property. */
  private static void check(String name, Runnable step) {
    try {
      step.run();
    } catch (IllegalArgumentException e) {
      throw FairwayConfigurationException.of(PREFIX + name, e);
    }
  }

  @Override
  public Duration firstReplyTimeout() {
    return properties.getFirstReplyTimeout();
  }

  @Override
  public String toString() {
    return "KubernetesTargetFeed{namespace=" + properties.getNamespace() + ", apiServer=" + properties.getApiServer()
        + "}";
  }
}
