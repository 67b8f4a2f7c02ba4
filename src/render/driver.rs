//! The build of one kustomization as a table of stages run by one driver loop, in kustomize's
//! order (`api/internal/target/kusttarget.go`: `accumulateTarget` runs the resources, then
//! `runGenerators`, then the components; `runTransformers` then runs what
//! `configureBuiltinTransformers` lists, from `transformerConfigurators` in
//! `api/internal/target/kusttarget_configplugin.go`, followed by `transformers:`; then the
//! validators and the vars). Each stage reports what it wrote through one optional
//! [`Tracker`] (`render/tracker.rs`), and the driver records it (field provenance) when the
//! stage ends.

use crate::diag::Result;
use crate::kustomization::{Loaded, RefKind};
use crate::resource::Resource;
use crate::resource::provenance::Step;

use super::tracker::{Pass, Tracker};
use super::{Builder, Chain, image_refs, metadata, places, plugins, steps};

/// A stage of a kustomization's build: the kustomization fields it reads, the provenance step
/// kind its changes are recorded under (`None`: it changes no object's fields, or names the
/// kind of each of its steps), and what it does.
pub(super) struct Stage {
    #[allow(dead_code)] // reason: names the stage in the table (its test reads it)
    pub(super) fields: &'static str,
    pub(super) step: Option<Step>,
    pub(super) run: StageFn,
}

/// What a stage does: given the render, the kustomization being built and the tracker, when
/// provenance is on.
pub(super) type StageFn =
    for<'p, 'c> fn(&mut Builder<'_>, &mut Pass<'p, 'c>, Option<&mut Tracker<'p>>) -> Result<()>;

/// The stages of every kustomization's build, in kustomize's order. A new step goes here, in
/// the place kustomize runs it.
pub(super) const STAGES: &[Stage] = &[
    Stage {
        fields: "images (check of the entries)",
        step: None,
        run: |b, pass, _| image_refs::check(pass.loaded, b.state.ctx.opts.strict, b.warnings),
    },
    Stage {
        fields: "resources",
        step: Some(Step::Resource),
        run: |b, pass, t| b.accumulate_resources(pass, t),
    },
    Stage {
        fields: "crds",
        step: None,
        run: |b, pass, _| b.load_crds(pass.loaded),
    },
    Stage {
        fields: "configurations",
        step: None,
        run: |b, pass, _| {
            steps::configurations(b.load.fs, b.state.ctx, pass.loaded, &mut b.state.config)
        },
    },
    Stage {
        fields: "configMapGenerator, secretGenerator, helmCharts, generators",
        step: Some(Step::Generator),
        run: |b, pass, t| b.run_generators(pass, t),
    },
    Stage {
        fields: "components",
        step: None,
        run: |b, pass, t| b.build_components(pass, t),
    },
    Stage {
        fields: "patchesStrategicMerge, patches",
        step: Some(Step::Patch),
        run: |b, pass, t| b.run_patches(pass, t),
    },
    Stage {
        fields: "namespace",
        step: Some(Step::Namespace),
        run: steps::namespace,
    },
    Stage {
        fields: "namePrefix, nameSuffix",
        step: Some(Step::NamePrefix),
        run: steps::prefix_suffix,
    },
    Stage {
        fields: "labels, commonLabels",
        step: Some(Step::Labels),
        run: steps::labels,
    },
    Stage {
        fields: "commonAnnotations",
        step: Some(Step::CommonAnnotations),
        run: steps::annotations,
    },
    Stage {
        fields: "patchesJson6902",
        step: Some(Step::Json6902),
        run: |b, pass, t| b.run_json6902(pass, t),
    },
    Stage {
        fields: "replicas",
        step: Some(Step::Replicas),
        run: steps::replicas,
    },
    Stage {
        fields: "images",
        step: Some(Step::Images),
        run: steps::images,
    },
    Stage {
        fields: "replacements",
        step: Some(Step::Replacement),
        run: |b, pass, t| {
            steps::replacements(
                b.load.fs,
                b.state.ctx,
                pass.loaded,
                &mut pass.acc,
                b.warnings,
                t,
            )
        },
    },
    Stage {
        fields: "buildMetadata (transformerAnnotations of the fields above)",
        step: None,
        run: |b, pass, _| {
            b.annotate_field_transformers(pass.loaded, &mut pass.acc);
            Ok(())
        },
    },
    Stage {
        fields: "transformers",
        step: Some(Step::Plugin),
        run: |b, pass, t| b.run_transformers(pass, t),
    },
    Stage {
        fields: "validators",
        step: None,
        run: |b, pass, _| {
            let validators = b.plugin_configs(pass.loaded, RefKind::Validator, pass.chain)?;
            plugins::run_validator_plugins(&validators)
        },
    },
    Stage {
        fields: "vars",
        step: None,
        run: |b, pass, t| {
            steps::bind_vars(
                pass.loaded,
                &mut pass.acc,
                &mut b.state.vars,
                b.state.ctx.tables,
            )?;
            if t.is_some() {
                places::declare_vars(&mut b.state.var_places, pass.loaded);
            }
            Ok(())
        },
    },
];

impl Builder<'_> {
    /// Builds one kustomization on top of `acc`: the driver loop over [`STAGES`]. With field
    /// provenance on, each stage gets a tracker and what it reported is recorded as it ends.
    pub(super) fn build_loaded(
        &mut self,
        loaded: &Loaded,
        acc: Vec<Resource>,
        chain: &Chain<'_>,
    ) -> Result<Vec<Resource>> {
        let prov = self.state.ctx.provenance();
        let mut pass = Pass {
            loaded,
            chain,
            acc,
            json6902: Vec::new(),
        };
        for stage in STAGES {
            let mut tracker = prov.then(|| Tracker::new(stage.step.unwrap_or(Step::Plugin)));
            (stage.run)(self, &mut pass, tracker.as_mut())?;
            if let Some(t) = &mut tracker {
                t.commit(&mut pass.acc);
            }
        }
        Ok(pass.acc)
    }

    /// With kustomize's `buildMetadata: [transformerAnnotations]`: the field transformers add
    /// and remove no objects, so recording them all after the last of them gives what
    /// kustomize records after each one.
    fn annotate_field_transformers(&self, loaded: &Loaded, acc: &mut [Resource]) {
        if !self.state.plugins.meta.transformers {
            return;
        }
        let here = self.state.plugins.meta.kustomization_file(loaded);
        for kind in metadata::field_transformers(loaded) {
            let source = self.state.plugins.meta.source();
            metadata::annotate_transformer(acc, &here, kind, None, source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::STAGES;

    #[test]
    fn every_field_of_the_table_is_named_once() {
        let mut seen = std::collections::HashSet::new();
        for s in STAGES {
            assert!(seen.insert(s.fields), "{} listed twice", s.fields);
        }
        // kustomize's order: resources before the generators, the components before the
        // transformers, patches before the field transformers, replacements after them.
        let at = |f: &str| STAGES.iter().position(|s| s.fields == f).unwrap();
        assert!(at("resources") < at("components"));
        assert!(at("patchesStrategicMerge, patches") < at("namespace"));
        assert!(at("commonAnnotations") < at("patchesJson6902"));
        assert!(at("patchesJson6902") < at("replicas"));
        assert!(at("images") < at("replacements"));
        assert!(at("replacements") < at("transformers"));
    }
}
