package dev.fairway.lb.spring;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.cloud.client.serviceregistry.Registration;

/**
 * This application's place in Consul read from its Spring Cloud service {@link Registration} (Spring
 * Cloud Consul's {@code ConsulAutoRegistration}: {@code getServiceId()} is the service,
 * {@code getInstanceId()} the {@code Service.ID} it registers). Its own class so that Spring Cloud
 * Commons is loaded only when present.
 */
final class RegistrationPlacement {
  private RegistrationPlacement() {}

  /** The unique registration's place, or null when there is none (or more than one). */
  static ConsulTargetFeed.@Nullable Placement of(BeanFactory beans) {
    Registration r = beans.getBeanProvider(Registration.class).getIfUnique();
    if (r == null || r.getServiceId() == null || r.getInstanceId() == null) {
      return null;
    }
    return new ConsulTargetFeed.Placement(r.getServiceId(), r.getInstanceId());
  }

  /** Whether the context defines a registration (checked at startup, without creating it). */
  static boolean defined(org.springframework.beans.factory.ListableBeanFactory beans) {
    return beans.getBeanNamesForType(Registration.class, true, false).length > 0;
  }
}
