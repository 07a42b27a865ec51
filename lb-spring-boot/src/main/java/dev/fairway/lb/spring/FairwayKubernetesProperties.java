package dev.fairway.lb.spring;

import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fairway.kubernetes.*} properties: each service's balancer fed from the EndpointSlices of
 * the Kubernetes Service of the same name (lb-discovery-kubernetes), on the Spring Cloud LoadBalancer
 * path and the OkHttp path alike, instead of Spring Cloud's discovery.
 *
 * <pre>
 * fairway.kubernetes.enabled=true
 * fairway.kubernetes.port-name=http
 * fairway.kubernetes.local-zone=${ZONE:}
 * </pre>
 *
 * <p>In a pod the service account's token, CA and namespace are used; outside one, set
 * {@code api-server} (with {@code token-file} and {@code ca-certificate} as needed), e.g. to
 * {@code kubectl proxy}'s URL. Checked at startup; a bad value stops it naming the property.
 * Mutable, as Boot's binding needs.
 */
@ConfigurationProperties("fairway.kubernetes")
public class FairwayKubernetesProperties {
  /** True feeds every balancer from the EndpointSlices of the Kubernetes Service named as the service. Default false. */
  private boolean enabled;

  /** The Services' namespace. Default: the pod's own, else default. */
  private @Nullable String namespace;

  /** The Service port to use, by name (empty for the unnamed port). Default: each slice's only TCP port. */
  private @Nullable String portName;

  /** The endpoints' port by number (the Pods' target port), instead of port-name. Default: each slice's only TCP port. */
  private @Nullable Integer port;

  /**
   * The zone this application runs in, for the slices' topology hints (hints.forZones); empty for none.
   * Default: the FAIRWAY_LOCAL_ZONE environment variable, else none.
   */
  private @Nullable String localZone;

  /** True takes a dual-stack Pod's IPv6 address instead of its IPv4 one. Default false. */
  private boolean preferIpv6;

  /** The API server's http or https URL, for development outside a cluster (e.g. kubectl proxy). Default: the in-cluster configuration. */
  private @Nullable String apiServer;

  /** A file holding the bearer token for api-server, read for every request. Default: none. */
  private @Nullable Path tokenFile;

  /** The PEM file of the authority that signs api-server's certificate. Default: the JDK's trusted authorities. */
  private @Nullable Path caCertificate;

  /** How long a balancer's first pick waits for the API server's first list of its Service. Default 5s. */
  private Duration firstReplyTimeout = Duration.ofSeconds(5);

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getNamespace() {
    return namespace;
  }

  public void setNamespace(@Nullable String namespace) {
    this.namespace = namespace;
  }

  public @Nullable String getPortName() {
    return portName;
  }

  public void setPortName(@Nullable String portName) {
    this.portName = portName;
  }

  public @Nullable Integer getPort() {
    return port;
  }

  public void setPort(@Nullable Integer port) {
    this.port = port;
  }

  public @Nullable String getLocalZone() {
    return localZone;
  }

  public void setLocalZone(@Nullable String localZone) {
    this.localZone = localZone;
  }

  public boolean isPreferIpv6() {
    return preferIpv6;
  }

  public void setPreferIpv6(boolean preferIpv6) {
    this.preferIpv6 = preferIpv6;
  }

  public @Nullable String getApiServer() {
    return apiServer;
  }

  public void setApiServer(@Nullable String apiServer) {
    this.apiServer = apiServer;
  }

  public @Nullable Path getTokenFile() {
    return tokenFile;
  }

  public void setTokenFile(@Nullable Path tokenFile) {
    this.tokenFile = tokenFile;
  }

  public @Nullable Path getCaCertificate() {
    return caCertificate;
  }

  public void setCaCertificate(@Nullable Path caCertificate) {
    this.caCertificate = caCertificate;
  }

  public Duration getFirstReplyTimeout() {
    return firstReplyTimeout;
  }

  public void setFirstReplyTimeout(Duration firstReplyTimeout) {
    this.firstReplyTimeout = firstReplyTimeout;
  }
}
