package dev.fairway.lb.spring;

import dev.fairway.lb.consul.ConsulDiscovery;
import dev.fairway.lb.consul.ConsulTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Fairway's own Consul watcher behind every balancer, with {@code fairway.consul.enabled=true} and
 * lb-discovery-consul on the classpath (it is an optional dependency of the starter): a
 * {@link ConsulDiscovery} built from {@link FairwayConsulProperties} (an application's own
 * {@code ConsulDiscovery} bean wins, and then its connection settings are the application's), and
 * the feed that makes one blocking-query source per balancer from it. The Spring Cloud LoadBalancer
 * path and the OkHttp path then read Consul directly instead of Spring Cloud's discovery: a
 * deregistration or a failing check reaches the balancer as soon as Consul knows it, not when the
 * supplier's cache expires.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(name = "dev.fairway.lb.consul.ConsulDiscovery")
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.consul", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(FairwayConsulProperties.class)
public class FairwayConsulAutoConfiguration {
  private static final String PREFIX = "fairway.consul.";
  private static final String REGISTRATION = "org.springframework.cloud.client.serviceregistry.Registration";

  /** Closed with the context: every source made from it stops, and so do its threads. */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  ConsulDiscovery fairwayConsulDiscovery(FairwayConsulProperties properties) {
    ConsulDiscovery.Builder b = agent(properties);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      // Files and the environment are read here: the message names the option or the variable.
      throw new FairwayConfigurationException("fairway.consul", "fairway.consul: " + e.getMessage());
    }
  }

  @Bean
  @ConditionalOnMissingBean(TargetFeed.class)
  ConsulTargetFeed fairwayConsulTargetFeed(ConsulDiscovery discovery, FairwayConsulProperties properties,
      FairwaySettings settings, FairwayProperties fairway, ObjectProvider<MeterRegistry> meters, Environment environment,
      ListableBeanFactory beans) {
    String dc = properties.getDatacenter();
    if (dc != null) {
      check("datacenter", () -> ConsulTargetSource.builder("fairway").datacenter(dc));
    }
    String key = properties.getZoneMetadataKey();
    check("zone-metadata-key", () -> ConsulTargetSource.builder("fairway").zoneMetadataKey(key));
    if (properties.getFirstReplyTimeout() == null || properties.getFirstReplyTimeout().isNegative()
        || properties.getFirstReplyTimeout().toMinutes() > 10) {
      throw new FairwayConfigurationException(PREFIX + "first-reply-timeout", PREFIX + "first-reply-timeout: "
          + properties.getFirstReplyTimeout() + " (expected: 0s..10m)");
    }
    Supplier<ConsulTargetFeed.@Nullable Placement> placement = placement(properties, environment, beans);
    boolean registered = properties.getInstanceId() != null
        || (ClassUtils.isPresent(REGISTRATION, getClass().getClassLoader()) && RegistrationPlacement.defined(beans));
    if (!registered) {
      // A subset that could never be placed fails now, not at the first call.
      for (ServiceSettings s : settings.named().values()) {
        if (s.subsetSize.value() != null) {
          throw ConsulTargetFeed.unplaced(s);
        }
      }
      Integer defaultSize = fairway.getDefault().getSubset().getSize();
      if (defaultSize != null) {
        String property = "fairway.default.subset.size";
        throw new FairwayConfigurationException(property, property + ": " + defaultSize
            + " (expected: this application's place among its peers in Consul: fairway.consul.instance-id,"
            + " or a Spring Cloud service registration such as Spring Cloud Consul's)");
      }
    }
    return new ConsulTargetFeed(discovery, properties, meters.getIfUnique(), placement);
  }

  /** The agent settings of {@code fairway.consul.*} on a builder, each through the builder's own check. */
  static ConsulDiscovery.Builder agent(FairwayConsulProperties p) {
    ConsulDiscovery.Builder b = ConsulDiscovery.builder();
    String address = p.getAddress();
    if (address != null) {
      check("address", () -> b.consulUrl(address));
    }
    String token = p.getToken();
    Path tokenFile = p.getTokenFile();
    if (token != null && tokenFile != null) {
      throw new FairwayConfigurationException(PREFIX + "token-file", PREFIX + "token-file: " + tokenFile
          + " set with " + PREFIX + "token (expected: one or the other)");
    }
    if (token != null) {
      // The builder's message never shows the token's value.
      check("token", () -> b.token(token));
    }
    if (tokenFile != null) {
      check("token-file", () -> b.tokenFile(tokenFile));
    }
    FairwayConsulProperties.Tls tls = p.getTls();
    Boolean verify = tls.getVerify();
    if (verify != null) {
      b.tlsVerify(verify);
    }
    Path ca = tls.getCaCertificate();
    if (ca != null) {
      check("tls.ca-certificate", () -> b.caCertificate(ca));
    }
    Path caPath = tls.getCaPath();
    if (caPath != null) {
      check("tls.ca-path", () -> b.caPath(caPath));
    }
    Path cert = tls.getClientCertificate();
    Path key = tls.getClientKey();
    if ((cert == null) != (key == null)) {
      String missing = cert == null ? "tls.client-certificate" : "tls.client-key";
      String set = cert == null ? "tls.client-key" : "tls.client-certificate";
      throw new FairwayConfigurationException(PREFIX + missing, PREFIX + missing + ": not set while " + PREFIX + set
          + " is " + (cert == null ? key : cert) + " (expected: both or neither)");
    }
    if (cert != null && key != null) {
      check("tls.client-certificate", () -> b.clientCertificate(cert, key));
    }
    String serverName = tls.getServerName();
    if (serverName != null) {
      check("tls.server-name", () -> b.tlsServerName(serverName));
    }
    String namespace = p.getNamespace();
    if (namespace != null) {
      check("namespace", () -> b.namespace(namespace));
    }
    String partition = p.getPartition();
    if (partition != null) {
      check("partition", () -> b.partition(partition));
    }
    return b;
  }

  /**
   * Where subsetting places this application: {@code fairway.consul.instance-id} (in
   * {@code service-name}, else {@code spring.application.name}), else its Spring Cloud service
   * registration, read when the first subset needs it (the registration bean may come later).
   */
  private static Supplier<ConsulTargetFeed.@Nullable Placement> placement(FairwayConsulProperties p,
      Environment environment, ListableBeanFactory beans) {
    String instanceId = p.getInstanceId();
    String serviceName = p.getServiceName();
    if (instanceId != null) {
      String service = serviceName != null ? serviceName : environment.getProperty("spring.application.name");
      if (service == null || service.isBlank()) {
        throw new FairwayConfigurationException(PREFIX + "service-name", PREFIX + "service-name: not set"
            + " (expected: the Consul service this application registered in, or spring.application.name)");
      }
      if (instanceId.isBlank() || !instanceId.equals(instanceId.strip())) {
        throw new FairwayConfigurationException(PREFIX + "instance-id", PREFIX + "instance-id: \"" + instanceId
            + "\" (expected: the Service.ID this application registered in Consul, or Service.ID@Node)");
      }
      check(serviceName != null ? "service-name" : "service-name (spring.application.name)",
          () -> ConsulTargetSource.builder(service));
      ConsulTargetFeed.Placement fixed = new ConsulTargetFeed.Placement(service, instanceId);
      return () -> fixed;
    }
    boolean commons = ClassUtils.isPresent(REGISTRATION, FairwayConsulAutoConfiguration.class.getClassLoader());
    return () -> {
      ConsulTargetFeed.Placement registered = commons ? RegistrationPlacement.of(beans) : null;
      if (registered == null || serviceName == null) {
        return registered;
      }
      return new ConsulTargetFeed.Placement(serviceName, registered.instanceId());
    };
  }

  /** Runs one builder check; its IllegalArgumentException becomes a message naming the property. */
  private static void check(String name, Runnable step) {
    try {
      step.run();
    } catch (IllegalArgumentException e) {
      throw FairwayConfigurationException.of(PREFIX + name, e);
    }
  }
}
