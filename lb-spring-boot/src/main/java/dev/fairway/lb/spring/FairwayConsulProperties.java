package dev.fairway.lb.spring;

import java.nio.file.Path;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fairway.consul.*} properties: Fairway's own Consul watcher behind every balancer.
 * With {@code fairway.consul.enabled=true} (and lb-discovery-consul on the classpath), each
 * service's balancer, on the Spring Cloud LoadBalancer path and the OkHttp path alike, is fed by a
 * blocking query on Consul's health API instead of Spring Cloud's discovery, with closeness from
 * Consul's network coordinates.
 *
 * <pre>
 * fairway.consul.enabled=true
 * fairway.consul.address=https://consul.service.internal:8501
 * fairway.consul.token-file=/var/run/secrets/consul-token
 * fairway.consul.tls.ca-certificate=/etc/consul/ca.pem
 * </pre>
 *
 * <p>Every connection setting left unset falls back to Consul's own environment variables, read as
 * the Consul CLI reads them ({@code CONSUL_HTTP_ADDR}, {@code CONSUL_HTTP_TOKEN_FILE},
 * {@code CONSUL_HTTP_TOKEN}, {@code CONSUL_CACERT}, ...), then to {@code http://127.0.0.1:8500}.
 * Checked at startup; a bad value stops it naming the property. Mutable, as Boot's binding needs.
 */
@ConfigurationProperties("fairway.consul")
public class FairwayConsulProperties {
  /** True feeds every balancer from Fairway's own Consul watcher instead of Spring Cloud's discovery. Default false. */
  private boolean enabled;

  /**
   * The agent's HTTP address: http://host:port, https://host:port or host:port. Default:
   * CONSUL_HTTP_ADDR, else http://127.0.0.1:8500.
   */
  private @Nullable String address;

  /** The ACL token, sent in the X-Consul-Token header only. Default: CONSUL_HTTP_TOKEN_FILE, then CONSUL_HTTP_TOKEN. */
  private @Nullable String token;

  /** A file holding the ACL token, read once at startup. Default: CONSUL_HTTP_TOKEN_FILE. */
  private @Nullable Path tokenFile;

  /** The datacenter to ask instead of the agent's own. Default: the agent's. */
  private @Nullable String datacenter;

  /** The namespace of every query (Consul Enterprise). Default: CONSUL_NAMESPACE, else the token's. */
  private @Nullable String namespace;

  /** The admin partition of every query (Consul Enterprise). Default: CONSUL_PARTITION, else the token's. */
  private @Nullable String partition;

  /** True asks Consul for passing instances only, leaving warning ones out. Default false: warning instances get Weights.Warning. */
  private boolean passingOnly;

  /** The Service.Meta key whose value is an instance's zone. Default zone. */
  private String zoneMetadataKey = "zone";

  /**
   * True gives each instance its estimated round-trip time from Consul's network coordinates, which
   * the strategies use to prefer closer instances (after the local zone, when local-zone is set). Default true.
   */
  private boolean closeness = true;

  /** How long a balancer's first pick waits for Consul's first answer about its service. Default 5s. */
  private Duration firstReplyTimeout = Duration.ofSeconds(5);

  /**
   * For subsetting: the Consul service this application registered itself in. Default: the service
   * id of its Spring Cloud service registration (Spring Cloud Consul's), else spring.application.name.
   */
  private @Nullable String serviceName;

  /**
   * For subsetting: the Service.ID this application registered itself as in Consul. Default: the
   * instance id of its Spring Cloud service registration (Spring Cloud Consul's).
   */
  private @Nullable String instanceId;

  private final Tls tls = new Tls();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getAddress() {
    return address;
  }

  public void setAddress(@Nullable String address) {
    this.address = address;
  }

  public @Nullable String getToken() {
    return token;
  }

  public void setToken(@Nullable String token) {
    this.token = token;
  }

  public @Nullable Path getTokenFile() {
    return tokenFile;
  }

  public void setTokenFile(@Nullable Path tokenFile) {
    this.tokenFile = tokenFile;
  }

  public @Nullable String getDatacenter() {
    return datacenter;
  }

  public void setDatacenter(@Nullable String datacenter) {
    this.datacenter = datacenter;
  }

  public @Nullable String getNamespace() {
    return namespace;
  }

  public void setNamespace(@Nullable String namespace) {
    this.namespace = namespace;
  }

  public @Nullable String getPartition() {
    return partition;
  }

  public void setPartition(@Nullable String partition) {
    this.partition = partition;
  }

  public boolean isPassingOnly() {
    return passingOnly;
  }

  public void setPassingOnly(boolean passingOnly) {
    this.passingOnly = passingOnly;
  }

  public String getZoneMetadataKey() {
    return zoneMetadataKey;
  }

  public void setZoneMetadataKey(String zoneMetadataKey) {
    this.zoneMetadataKey = zoneMetadataKey;
  }

  public boolean isCloseness() {
    return closeness;
  }

  public void setCloseness(boolean closeness) {
    this.closeness = closeness;
  }

  public Duration getFirstReplyTimeout() {
    return firstReplyTimeout;
  }

  public void setFirstReplyTimeout(Duration firstReplyTimeout) {
    this.firstReplyTimeout = firstReplyTimeout;
  }

  public @Nullable String getServiceName() {
    return serviceName;
  }

  public void setServiceName(@Nullable String serviceName) {
    this.serviceName = serviceName;
  }

  public @Nullable String getInstanceId() {
    return instanceId;
  }

  public void setInstanceId(@Nullable String instanceId) {
    this.instanceId = instanceId;
  }

  public Tls getTls() {
    return tls;
  }

  /** TLS to the agent, for an https address. */
  public static class Tls {
    /** False accepts any certificate under any name: for tests only. Default: CONSUL_HTTP_SSL_VERIFY, else true. */
    private @Nullable Boolean verify;

    /** A PEM file of CA certificates to trust instead of the JDK's. Default: CONSUL_CACERT. */
    private @Nullable Path caCertificate;

    /** A directory of PEM CA certificates to trust. Default: CONSUL_CAPATH. */
    private @Nullable Path caPath;

    /** The client certificate chain (PEM), for an agent with verify_incoming. Default: CONSUL_CLIENT_CERT. */
    private @Nullable Path clientCertificate;

    /** The client certificate's unencrypted PEM key. Default: CONSUL_CLIENT_KEY. */
    private @Nullable Path clientKey;

    /** The name the agent's certificate must carry, when it differs from the address; sent as SNI. Default: CONSUL_TLS_SERVER_NAME. */
    private @Nullable String serverName;

    public @Nullable Boolean getVerify() {
      return verify;
    }

    public void setVerify(@Nullable Boolean verify) {
      this.verify = verify;
    }

    public @Nullable Path getCaCertificate() {
      return caCertificate;
    }

    public void setCaCertificate(@Nullable Path caCertificate) {
      this.caCertificate = caCertificate;
    }

    public @Nullable Path getCaPath() {
      return caPath;
    }

    public void setCaPath(@Nullable Path caPath) {
      this.caPath = caPath;
    }

    public @Nullable Path getClientCertificate() {
      return clientCertificate;
    }

    public void setClientCertificate(@Nullable Path clientCertificate) {
      this.clientCertificate = clientCertificate;
    }

    public @Nullable Path getClientKey() {
      return clientKey;
    }

    public void setClientKey(@Nullable Path clientKey) {
      this.clientKey = clientKey;
    }

    public @Nullable String getServerName() {
      return serverName;
    }

    public void setServerName(@Nullable String serverName) {
      this.serverName = serverName;
    }
  }
}
