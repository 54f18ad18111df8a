// Package serviceca plays, on the management cluster, the part of OpenShift's service-ca
// operator that a hosted control plane lacks: it fills the service CA bundle of the
// ConfigMaps topolayer placed in the HCP namespace that ask for one, from the CA bundle
// HyperShift provides there.
//
// A standalone operator writes a ConfigMap with the annotation
// service.beta.openshift.io/inject-cabundle (or its older service.alpha. form) set to
// "true", and the service-ca operator adds the key service-ca.crt. The cluster-authentication
// operator writes v4-0-config-system-service-ca so, checks that the key is there, and mounts
// it into the OAuth server, whose config names it as its master CA. On the management
// cluster the key never comes: the guest's service-ca operator does not reach it, and the
// hypershift profile withholds the ask from the management cluster's own, whose CA the
// guest does not use (the annotation is recorded under transform.AnnotationWithheld, which
// AsksForBundle reads too). HyperShift's own oauth-openshift reads its master CA from
// oauth-master-ca-bundle (key ca.crt) instead. An Injector copies that
// bundle into the key.
//
// It fills only what is known to be an operand's: a ConfigMap of its namespace that asks
// for the bundle and whose fields topolayer's applier manages (PlacedBy). It never creates
// a ConfigMap, never touches another key, and writes nothing when the key already holds the
// bundle. Its write is a server-side apply of that one key by its own field manager
// (FieldManager), so the operator's later writes of the ConfigMap leave it in place.
//
// The caller names the candidates (topolayer apply: the ConfigMaps its plan placed;
// topolayer run: those and the ones the operator reads). A rotated bundle reaches them on
// the operator's next run.
//
//	in := serviceca.New(managementClient, serviceca.Options{
//		Namespace: "clusters-example", ConfigMap: "oauth-master-ca-bundle", Key: "ca.crt",
//		PlacedBy: "topolayer",
//	})
//	filled, err := in.Inject(ctx, []string{"openshift-authentication--v4-0-config-system-service-ca"})
package serviceca
